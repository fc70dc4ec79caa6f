import type { Database } from "@site/db";
import { outageOf } from "@site/domain/core";
import type { JobQueue } from "@site/queue";
import type { ObjectStore } from "@site/storage";
import { sql } from "drizzle-orm";

/** One readiness check: resolves when the dependency is usable, throws (or hangs) when it is not. */
export type Check = () => Promise<void>;

/** The result of one check: usable or not, how long it took, and why not in a few words. */
export type CheckResult = { ok: boolean; ms: number; reason?: string };

/** Every check's result; `ready` when all passed. */
export type Readiness = { ready: boolean; checks: Record<string, CheckResult> };

/** The checks of the dependencies every app shares: database, queue, and storage (writable). */
export function dependencyChecks(deps: {
  db: Database;
  queue?: JobQueue;
  store?: ObjectStore;
}): Record<string, Check> {
  const checks: Record<string, Check> = {
    database: async () => {
      await deps.db.execute(sql`select 1`);
    },
  };
  // The in-process queue answers at once; BullMQ asks Redis (a bounded call).
  if (deps.queue) checks.queue = async () => void (await deps.queue!.depth("render-screenshot"));
  if (deps.store) checks.storage = () => deps.store!.checkWritable();
  return checks;
}

function reasonOf(err: unknown): string {
  const outage = outageOf(err);
  if (outage?.full) return "full: cannot take writes";
  if (outage?.dependency === "storage") return "not writable";
  if (outage) return "unreachable";
  return err instanceof Error && err.message.length <= 120 && !/[/\\]/.test(err.message)
    ? err.message
    : "failed";
}

/** Runs every check at once, each bounded by `timeoutMs` (a check that does not answer in time fails). */
export async function checkReadiness(checks: Record<string, Check>, timeoutMs: number): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      const t0 = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([check(), late]);
        return [name, { ok: true, ms: Math.round(performance.now() - t0) }];
      } catch (err) {
        return [name, { ok: false, ms: Math.round(performance.now() - t0), reason: reasonOf(err) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const results = Object.fromEntries(entries);
  return { ready: entries.every(([, r]) => r.ok), checks: results };
}

/**
 * A readiness probe that coalesces: concurrent callers share one run, and a result is reused for
 * `reuseMs`, so a flood of /readyz calls cannot turn into a flood of storage writes.
 */
export function readinessProbe(
  checks: Record<string, Check>,
  opts: { timeoutMs: number; reuseMs?: number },
): () => Promise<Readiness> {
  let last: { at: number; result: Promise<Readiness> } | null = null;
  const reuse = opts.reuseMs ?? 1000;
  return () => {
    const now = performance.now();
    if (last && now - last.at < reuse) return last.result;
    const result = checkReadiness(checks, opts.timeoutMs);
    last = { at: now, result };
    return result;
  };
}

const JSON_TYPE = { "content-type": "application/json; charset=utf-8" };

/** GET /healthz: liveness only; answers at once, whatever the dependencies do. */
export function livenessResponse(): Response {
  return new Response(JSON.stringify({ status: "ok" }), { headers: JSON_TYPE });
}

/**
 * GET /readyz: 200 `{status: "ready", checks}` when every dependency is usable, else 503 in the
 * contract's error body naming the ones that are not, with Retry-After. `stopping` answers 503 at once.
 */
export function readinessResponse(
  r: Readiness | "stopping",
  retryAfterSeconds: number,
  extraHeaders: Record<string, string> = {},
): Response {
  if (r !== "stopping" && r.ready)
    return new Response(JSON.stringify({ status: "ready", checks: r.checks }), {
      headers: { ...JSON_TYPE, ...extraHeaders },
    });
  const failing = r === "stopping" ? [] : Object.keys(r.checks).filter((k) => !r.checks[k]!.ok);
  const message =
    r === "stopping" ? "not ready: this process is shutting down" : `not ready: ${failing.join(", ")}`;
  const details = r === "stopping" ? { stopping: true } : { notReady: failing, checks: r.checks };
  return new Response(JSON.stringify({ error: { code: "SERVICE_UNAVAILABLE", message, details } }), {
    status: 503,
    headers: { ...JSON_TYPE, "retry-after": String(retryAfterSeconds), ...extraHeaders },
  });
}

/**
 * Serves GET /healthz and /readyz on their own port (the render daemon's metrics listener, the
 * metrics app); `other` answers any further path (the daemon's /metrics), else 404.
 */
export function serveHealth(opts: {
  port: number;
  hostname?: string;
  ready: () => Promise<Readiness>;
  retryAfterSeconds: number;
  stopping?: () => boolean;
  other?: (req: Request) => Promise<Response> | Response | null;
}): { url: string; port: number; stop(): Promise<void> } {
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.hostname ?? "0.0.0.0",
    fetch: async (req) => {
      const { pathname } = new URL(req.url);
      if (req.method === "GET" && pathname === "/healthz") return livenessResponse();
      if (req.method === "GET" && pathname === "/readyz")
        return readinessResponse(opts.stopping?.() ? "stopping" : await opts.ready(), opts.retryAfterSeconds);
      const other = await opts.other?.(req);
      return other ?? new Response("not found\n", { status: 404 });
    },
  });
  return {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port ?? opts.port,
    stop: async () => {
      await server.stop(true);
    },
  };
}
