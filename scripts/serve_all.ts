import { join } from "node:path";
import { startApi } from "@site/api";
import { loadConfig } from "@site/config";
import { startMetrics } from "@site/metrics";
import { startRenderDaemon } from "@site/render-daemon";
import { openRuntime, processShutdown } from "@site/runtime";
import { type Subprocess, spawn } from "bun";

/**
 * All three apps in one process, sharing one runtime (./scripts/start). With `--daemons N` the API and
 * the metrics app run here and N render daemons run as processes of their own (each its own Chromium
 * pool and database pool), all on the machine's PostgreSQL and Redis: DATABASE_URL and REDIS_URL, by
 * default postgres://postgres@127.0.0.1:5432/postgres and redis://127.0.0.1:6379 (a queue several
 * processes share must be Redis). Each daemon i gets RENDER_METRICS_PORT + i when that is set. The API
 * here records its PUBLIC_BASE_URL, which the daemons take when they have none (decision 1454).
 */
function parseDaemons(argv: string[]): number | null {
  const i = argv.findIndex((a) => a === "--daemons" || a.startsWith("--daemons="));
  if (i < 0) return null;
  const raw = argv[i]!.includes("=") ? argv[i]!.split("=")[1] : argv[i + 1];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    console.error(`--daemons needs a number of render daemons from 1 to 64, got "${raw ?? ""}"`);
    process.exit(2);
  }
  return n;
}

const daemonCount = parseDaemons(process.argv.slice(2));
if (daemonCount !== null) {
  process.env.DATABASE_URL ||= "postgres://postgres@127.0.0.1:5432/postgres";
  process.env.REDIS_URL ||= "redis://127.0.0.1:6379";
}
const rt = await openRuntime(
  daemonCount === null ? { publicBase: "record" } : { config: loadConfig(process.env), publicBase: "record" },
);
// Read by the daemon processes' watchers (a daemon that exits while not stopping is an error).
const shutdown = processShutdown(rt, "site content api");
const api = startApi(rt);
const children: Subprocess[] = [];
const daemon = daemonCount === null ? await startRenderDaemon(rt) : null;
if (daemonCount !== null) {
  rt.log.info(`starting ${daemonCount} render daemons`, {
    daemons: daemonCount,
    redis: new URL(process.env.REDIS_URL!).host,
    database: new URL(process.env.DATABASE_URL!).host,
  });
  for (let i = 1; i <= daemonCount; i++) children.push(startDaemonProcess(i, daemonCount));
}
const metrics = await startMetrics(rt);

/** Runs daemon `i` as `bun apps/render-daemon/src/main.ts`, its output prefixed `[daemon i]`. */
function startDaemonProcess(i: number, of: number): Subprocess {
  const metricsPort = rt.config.renderMetricsPort;
  const child = spawn([process.execPath, join(import.meta.dir, "../apps/render-daemon/src/main.ts")], {
    env: {
      ...process.env,
      ...(metricsPort !== null && metricsPort > 0 ? { RENDER_METRICS_PORT: String(metricsPort + i) } : {}),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let announced = false;
  const relay = async (stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const dec = new TextDecoder();
    let rest = "";
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += dec.decode(value, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        to.write(`[daemon ${i}] ${line}\n`);
        if (!announced && line.includes("render daemon taking jobs")) {
          announced = true;
          console.log(`render daemon ${i} of ${of} ready (pid ${child.pid})`);
        }
      }
    }
  };
  void relay(child.stdout as ReadableStream<Uint8Array>, process.stdout);
  void relay(child.stderr as ReadableStream<Uint8Array>, process.stderr);
  void child.exited.then((code) => {
    if (!shutdown.stopping) rt.log.error(`render daemon ${i} exited`, { code, pid: child.pid });
  });
  return child;
}

shutdown.stopWith(async () => {
  await api.stop();
  // Each daemon process finishes or hands back its jobs (its own SIGTERM handling), then exits.
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
  await daemon?.stop();
  await metrics.stop();
});
// Announced once a SIGTERM would be handled (a supervisor may stop it the moment it reads this line).
console.log(
  `Site Content API: ${rt.config.publicBaseUrl} (listening on ${api.url}; docs at ${api.url}/swagger)`,
);
