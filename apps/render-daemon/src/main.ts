import { openRuntime } from "@site/runtime";
import { startRenderDaemon } from "./daemon.ts";

/** `bun run apps/render-daemon`: the render daemon alone, configured by the environment. */
const rt = await openRuntime();
const daemon = await startRenderDaemon(rt);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    await daemon.stop();
    await rt.close();
    process.exit(0);
  });
}
