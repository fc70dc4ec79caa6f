import { openRuntime, processShutdown } from "@site/runtime";
import { startApi } from "./server.ts";

/** `bun run apps/api`: the API alone, configured by the environment. */
const rt = await openRuntime({ publicBase: "record" });
const api = startApi(rt);
// Stops accepting, lets requests in flight finish (SHUTDOWN_GRACE_MS), answers the rest 503.
processShutdown(rt, "api process").stopWith(() => api.stop());
// Ready only once a SIGTERM would be handled: a supervisor that stops the process the moment it reads
// the URL gets a clean exit, not the default action (143).
console.log(api.url);
