import { openRuntime, processShutdown } from "@site/runtime";
import { startRenderDaemon } from "./daemon.ts";

/** `bun run apps/render-daemon`: the render daemon alone, configured by the environment. */
const rt = await openRuntime({ app: "render-daemon" });
const daemon = await startRenderDaemon(rt);
// The daemon finishes or hands back its jobs and closes its browsers; then DB and Redis close.
processShutdown(rt, "render daemon process").stopWith(() => daemon.stop());
