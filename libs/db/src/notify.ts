import { type SQL, sql } from "drizzle-orm";
import postgres from "postgres";

/** A LISTEN on one channel that knows whether it is connected. */
export type ChannelWatch = {
  /** True while the LISTEN connection is up and answered its last heartbeat: notices reach us. */
  readonly live: boolean;
  close(): Promise<void>;
};

/**
 * Listens to `channel` on a dedicated connection of its own and keeps it listening: reconnects every
 * `retryMs` after a failure, and checks the connection with a heartbeat so a silently dead one is
 * noticed. `onLive(false)` fires as soon as notices may be missed (connection lost, heartbeat late),
 * `onLive(true)` once LISTEN is active again; a caller that caches on the strength of the notices
 * stops trusting its cache in between. (postgres.js's own `listen` gives up re-listening after a
 * failed reconnect, without telling anyone.)
 */
export function watchChannel(
  url: string,
  channel: string,
  handlers: {
    onNotify(payload: string): void;
    onLive?(live: boolean): void;
    /** A connection or LISTEN attempt failed (retried every `retryMs`). */
    onError?(err: unknown): void;
    connectTimeoutMs?: number;
    retryMs?: number;
    heartbeatMs?: number;
    /** The connection's application_name (to find it in pg_stat_activity). */
    appName?: string;
  },
): ChannelWatch {
  const retryMs = handlers.retryMs ?? 500;
  const heartbeatMs = handlers.heartbeatMs ?? 5000;
  let stopped = false;
  let live = false;
  let current: postgres.Sql | null = null;
  let connecting = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  const setLive = (v: boolean) => {
    if (live === v) return;
    live = v;
    handlers.onLive?.(v);
  };
  const drop = (s: postgres.Sql) => {
    if (current === s) current = null;
    setLive(false);
    s.end({ timeout: 0 }).catch(() => {});
    schedule();
  };
  const schedule = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = null;
      void start();
    }, retryMs);
  };
  const start = async () => {
    if (stopped || connecting || current) return;
    connecting = true;
    const s: postgres.Sql = postgres(url, {
      max: 1,
      max_lifetime: null,
      idle_timeout: 0,
      fetch_types: false,
      connect_timeout: (handlers.connectTimeoutMs ?? 3000) / 1000,
      onnotice: () => {},
      connection: { application_name: handlers.appName ?? "site-listen" },
      onnotify: (c: string, payload: string) => {
        if (c === channel) handlers.onNotify(payload);
      },
      onclose: () => {
        if (current === s) drop(s);
      },
    } as postgres.Options<Record<string, postgres.PostgresType>>);
    try {
      await s.unsafe(`listen "${channel.replace(/"/g, '""')}"`);
      if (stopped) {
        await s.end({ timeout: 0 });
        return;
      }
      current = s;
      setLive(true);
    } catch (err) {
      s.end({ timeout: 0 }).catch(() => {});
      handlers.onError?.(err);
      schedule();
    } finally {
      connecting = false;
    }
  };
  // A connection can die without a FIN (a partition): a late heartbeat counts as a lost one.
  const beat = setInterval(() => {
    const s = current;
    if (!s) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((r) => {
      timer = setTimeout(() => r("late"), Math.min(2000, heartbeatMs));
    });
    Promise.race([s`select 1`.then(() => "ok" as const), late])
      .then((r) => {
        if (r === "late" && current === s) drop(s);
      })
      .catch(() => {
        if (current === s) drop(s);
      })
      .finally(() => clearTimeout(timer));
  }, heartbeatMs);
  beat.unref?.();
  void start();
  return {
    get live() {
      return live;
    },
    async close() {
      stopped = true;
      clearInterval(beat);
      if (retry) clearTimeout(retry);
      const s = current;
      current = null;
      setLive(false);
      await s?.end({ timeout: 1 }).catch(() => {});
    },
  };
}

/**
 * The channel on which the end of work that callers wait for (a render, a clip, a campaign's sending)
 * is announced, the resource's id as payload. Sent inside the transaction that ends it, so PostgreSQL
 * delivers it only at commit (PostgreSQL docs, NOTIFY: "if a NOTIFY is executed inside a transaction,
 * the notify events are not delivered until and unless the transaction is committed").
 */
export const WORK_ENDED_CHANNEL = "work_ended";

/** Announces on WORK_ENDED_CHANNEL that the work of `id` ended (in the caller's transaction). */
export async function notifyWorkEnded(tx: { execute(q: SQL): Promise<unknown> }, id: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${WORK_ENDED_CHANNEL}, ${id})`);
}
