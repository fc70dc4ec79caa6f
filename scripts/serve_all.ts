import { startApi } from "@site/api";
import { startMetrics } from "@site/metrics";
import { startRenderDaemon } from "@site/render-daemon";
import { openRuntime } from "@site/runtime";

/** All three apps in one process, sharing one runtime (./scripts/start). */
const rt = await openRuntime({ publicBase: "record" });
const api = startApi(rt);
const daemon = await startRenderDaemon(rt);
const metrics = await startMetrics(rt);
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    rt.log.info("shutting down", { signal: sig });
    await api.stop();
    await daemon.stop();
    await metrics.stop();
    await rt.close();
    process.exit(0);
  });
}
// Announced once a SIGTERM would be handled (a supervisor may stop it the moment it reads this line).
console.log(
  `Site Content API: ${rt.config.publicBaseUrl} (listening on ${api.url}; docs at ${api.url}/swagger)`,
);
