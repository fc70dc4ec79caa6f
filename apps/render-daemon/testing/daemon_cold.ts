// `apps/render-daemon/src/main.ts` without the warm-up at start (featured plates drawn in the background
// for minutes on a busy 2-core host): a real daemon process for fault tests whose subject is not warming.
import { openRuntime } from "@site/runtime";
import { startRenderDaemon } from "../src/daemon.ts";

const rt = await openRuntime();
const daemon = await startRenderDaemon(rt, { warm: false });
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    await daemon.stop();
    await rt.close();
    process.exit(0);
  });
}
