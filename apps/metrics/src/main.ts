import { openRuntime } from "@site/runtime";
import { startMetrics } from "./service.ts";

/** `bun run apps/metrics`: the collector alone, configured by the environment. */
const rt = await openRuntime();
const metrics = await startMetrics(rt);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    await metrics.stop();
    await rt.close();
    process.exit(0);
  });
}
