import { openRuntime } from "@site/runtime";
import { startRenderDaemon } from "./daemon.ts";

/** `bun run apps/render-daemon`: the render daemon alone, configured by the environment. */
const rt = await openRuntime({ app: "render-daemon" });
const daemon = await startRenderDaemon(rt);
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    // The daemon finishes or hands back its jobs and closes its browsers; then DB and Redis close.
    await daemon.stop();
    await rt.close();
    process.exit(0);
  });
}
