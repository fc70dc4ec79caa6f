// What the farm uses while it runs: server connections (watched every 200 ms) and counters of its
// database, Redis and CPU work (read at points, differenced).

import type postgres from "postgres";
import type { Child } from "./child.ts";
import { cpuSeconds, redisCommandStats, sumCalls } from "./measure.ts";
import type { ConnectionFigures, IdleRates } from "./types.ts";

/** Watches the role's connections and PgBouncer's pools until `stop()`; the maxima land in `conns`. */
export function watchConnections(
  tag: string,
  watch: postgres.Sql,
  poolerAdmin: postgres.Sql,
): { conns: ConnectionFigures; stop(): Promise<void> } {
  const conns = { roleMax: 0, poolerServersMax: 0, clientsWaitingMax: 0, maxWaitS: 0 };
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const [{ n }] =
        (await watch`select count(*)::int as n from pg_stat_activity where usename = ${tag}`) as [
          { n: number },
        ];
      conns.roleMax = Math.max(conns.roleMax, n);
      const pools = (await poolerAdmin.unsafe("show pools").simple()) as Record<string, unknown>[];
      for (const p of pools.filter((r) => r.database === tag)) {
        const sv = ["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"].reduce(
          (s, k) => s + Number(p[k] ?? 0),
          0,
        );
        conns.poolerServersMax = Math.max(conns.poolerServersMax, sv);
        conns.clientsWaitingMax = Math.max(conns.clientsWaitingMax, Number(p.cl_waiting ?? 0));
        conns.maxWaitS = Math.max(conns.maxWaitS, Number(p.maxwait ?? 0));
      }
      await Bun.sleep(200);
    }
  })();
  return {
    conns,
    stop: async () => {
      watching = false;
      await watcher;
    },
  };
}

/** The farm's counters at one moment. */
export type Snapshot = {
  db: { xacts: number; queries: number };
  redis: Record<string, number>;
  cpu: { api: number; workers: number };
  t: number;
};

/** Reads the farm's counters: PgBouncer's SHOW STATS, Redis's commandstats, the processes' CPU. */
export function farmCounters(
  tag: string,
  poolerAdmin: postgres.Sql,
  redisClient: Bun.RedisClient,
  api: Child,
  workers: Child[],
): () => Promise<Snapshot> {
  const poolerStats = async () => {
    const rows = (await poolerAdmin.unsafe("show stats").simple()) as Record<string, unknown>[];
    const row = rows.find((r) => r.database === tag);
    return { xacts: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
  };
  const redisCalls = async () => redisCommandStats(String(await redisClient.send("INFO", ["commandstats"])));
  const cpu = () => ({
    api: cpuSeconds(api.proc.pid),
    workers: workers.reduce((s, w) => s + cpuSeconds(w.proc.pid), 0),
  });
  return async () => ({
    db: await poolerStats(),
    redis: await redisCalls(),
    cpu: cpu(),
    t: performance.now(),
  });
}

/** The idle farm's own work (sweepers, polls, queue waits), over 3 s: per worker per second, and the API's CPU. */
export async function measureIdle(
  snapshot: () => Promise<Snapshot>,
  workers: number,
): Promise<{ idlePerWorkerPerS: IdleRates; idleApiCpuMsPerS: number }> {
  const idle0 = await snapshot();
  await Bun.sleep(3000);
  const idle1 = await snapshot();
  const idleS = (idle1.t - idle0.t) / 1000;
  const idlePerWorkerPerS = {
    xacts: (idle1.db.xacts - idle0.db.xacts) / idleS / workers,
    queries: (idle1.db.queries - idle0.db.queries) / idleS / workers,
    redisCalls: sumCalls(idle0.redis, idle1.redis) / idleS / workers,
    cpuMs: ((idle1.cpu.workers - idle0.cpu.workers) * 1000) / idleS / workers,
  };
  return { idlePerWorkerPerS, idleApiCpuMsPerS: ((idle1.cpu.api - idle0.cpu.api) * 1000) / idleS };
}
