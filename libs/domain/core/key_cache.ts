import type { Logger } from "@site/config";
import { watchChannel } from "@site/db";
import type { Principal } from "./principal.ts";

/**
 * The PostgreSQL channel a revoke notifies (payload: the key's id; `member:<org>:<user>` for a role
 * change), read by every process's key cache.
 */
export const KEY_REVOKED_CHANNEL = "site_api_key_revoked";

/**
 * Verified API keys kept in process for a short time, so a keyed read pays no key lookup. A revoke
 * notifies every process through PostgreSQL (LISTEN/NOTIFY) and the entry is dropped at once; while a
 * process cannot hear those notices (its LISTEN connection is down), it trusts nothing it cached.
 */
export type KeyCache = {
  /** True while revocations reach this process: only then is the cache used. */
  readonly live: boolean;
  /** Bumped by every revocation heard and every reconnect; `put` of a lookup older than it is dropped. */
  readonly epoch: number;
  /** The principal of a key's hash, or null (unknown, expired, or revocations not heard right now). */
  get(hash: string): Principal | null;
  /** Keeps a principal looked up while `epoch` was current (a revoke heard meanwhile voids it). */
  put(hash: string, principal: Principal, epoch: number): void;
  /** Resolves true once this process heard the revocation of `keyId` (false after `maxMs`). */
  heard(keyId: string, maxMs: number): Promise<boolean>;
  close(): Promise<void>;
};

/** Opens a key cache listening for revocations on its own connection to `databaseUrl`. */
export function createKeyCache(opts: {
  databaseUrl: string;
  ttlMs: number;
  max?: number;
  log?: Logger;
  now?: () => number;
}): KeyCache {
  const max = opts.max ?? 10_000;
  const now = opts.now ?? (() => performance.now());
  const entries = new Map<string, { principal: Principal; until: number }>();
  const recent = new Map<string, number>();
  const waiters = new Map<string, Set<() => void>>();
  let epoch = 0;
  const flush = () => {
    entries.clear();
    epoch++;
  };
  const watch = watchChannel(opts.databaseUrl, KEY_REVOKED_CHANNEL, {
    appName: "site-key-cache",
    onNotify(keyId) {
      epoch++;
      // A key's id, or `member:<org>:<user>` when a member's role changed (their keys' scopes with it).
      const member = /^member:([^:]+):(.+)$/.exec(keyId);
      for (const [hash, e] of entries)
        if (
          member
            ? e.principal.orgId === member[1] && e.principal.userId === member[2]
            : e.principal.keyId === keyId
        )
          entries.delete(hash);
      recent.set(keyId, now());
      if (recent.size > 1000) recent.delete(recent.keys().next().value as string);
      for (const w of waiters.get(keyId) ?? []) w();
      waiters.delete(keyId);
    },
    onLive(live) {
      // Notices may have been missed while down: start over either way.
      flush();
      opts.log?.[live ? "info" : "warn"](
        live ? "key cache: revocations heard" : "key cache: revocations not heard; not caching",
      );
    },
  });
  return {
    get live() {
      return watch.live;
    },
    get epoch() {
      return epoch;
    },
    get(hash) {
      if (!watch.live) return null;
      const e = entries.get(hash);
      if (!e) return null;
      if (e.until <= now()) {
        entries.delete(hash);
        return null;
      }
      return e.principal;
    },
    put(hash, principal, at) {
      if (!watch.live || at !== epoch || opts.ttlMs <= 0) return;
      if (entries.size >= max) entries.delete(entries.keys().next().value as string);
      entries.set(hash, { principal, until: now() + opts.ttlMs });
    },
    heard(keyId, maxMs) {
      if (recent.has(keyId)) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          waiters.get(keyId)?.delete(done);
          resolve(false);
        }, maxMs);
        const set = waiters.get(keyId) ?? new Set<() => void>();
        waiters.set(keyId, set);
        set.add(done);
      });
    },
    async close() {
      flush();
      await watch.close();
    },
  };
}
