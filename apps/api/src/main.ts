import { openRuntime } from "@site/runtime";
import { startApi } from "./server.ts";

/** `bun run apps/api`: the API alone, configured by the environment. */
const rt = await openRuntime({ publicBase: "record" });
const api = startApi(rt);
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    rt.log.info("shutting down", { signal: sig });
    // Stops accepting, lets requests in flight finish (SHUTDOWN_GRACE_MS), answers the rest 503.
    await api.stop();
    await rt.close();
    rt.log.info("api process exiting");
    process.exit(0);
  });
}
// Ready only once a SIGTERM would be handled: a supervisor that stops the process the moment it reads
// the URL gets a clean exit, not the default action (143).
console.log(api.url);
