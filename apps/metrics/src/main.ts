import { dependencyChecks, openRuntime, processShutdown, readinessProbe, serveHealth } from "@site/runtime";
import { runCollectorPass } from "./collector.ts";
import { startMetrics } from "./service.ts";

/** Reads `--once` and `--now <ISO time>`; exits 2 with a message on a bad value. */
function parseArgs(argv: string[]): { once: boolean; now: Date | null } {
  let once = false;
  let now: Date | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--once") once = true;
    else if (arg === "--now" || arg.startsWith("--now=")) {
      const raw = arg === "--now" ? argv[++i] : arg.slice("--now=".length);
      const d = raw ? new Date(raw) : null;
      if (!d || Number.isNaN(d.getTime())) {
        console.error(`--now needs an ISO 8601 time, got "${raw ?? ""}"`);
        process.exit(2);
      }
      now = d;
    } else {
      console.error(`unknown argument "${arg}"; usage: bun run apps/metrics [--once [--now <ISO time>]]`);
      process.exit(2);
    }
  }
  return { once, now };
}

/** `bun run apps/metrics`: the collector alone; `--once [--now <ISO>]` runs one pass and prints its report. */
const args = parseArgs(process.argv.slice(2));
const rt = await openRuntime({ app: "metrics" });
if (args.once) {
  try {
    const report = await runCollectorPass(rt, { now: args.now ?? undefined });
    console.log(JSON.stringify({ now: (args.now ?? rt.clock.now()).toISOString(), ...report }));
  } finally {
    await rt.close();
  }
  process.exit(0);
}
const shutdown = processShutdown(rt, "metrics app");
// GET /healthz and /readyz on METRICS_HEALTH_PORT: the database, and Redis when the schedule runs on it.
const health =
  rt.config.metricsHealthPort === null
    ? null
    : serveHealth({
        port: rt.config.metricsHealthPort,
        ready: readinessProbe(
          dependencyChecks({ db: rt.db, queue: rt.config.redisUrl ? rt.queue : undefined }),
          {
            timeoutMs: rt.config.timeouts.readyCheckMs,
          },
        ),
        retryAfterSeconds: rt.config.retryAfterSeconds,
        stopping: () => shutdown.stopping,
      });
if (health) rt.log.info("metrics health listening", { url: health.url });
const metrics = await startMetrics(rt);
shutdown.stopWith(async () => {
  await metrics.stop();
  await health?.stop();
});
