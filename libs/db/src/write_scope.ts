import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What one unit of work (an API request) has done to the database, for graceful shutdown (decision
 * 0820). It is `open` until its first durable write statement is sent, then `writing`: from then on its
 * outcome is whatever the work does, so it must be allowed to finish. An open scope can be `cancelled`
 * (its request answered 503 "retry it"): every write statement it sends afterwards is refused before it
 * reaches PostgreSQL, so that 503 stays true — nothing was written and nothing will be.
 */
export class WriteScope {
  #state: "open" | "writing" | "cancelled" = "open";

  /** `open`, `writing` (a durable write was sent) or `cancelled`. */
  get state(): "open" | "writing" | "cancelled" {
    return this.#state;
  }

  /** Called before each write statement; throws {@link WritesRefusedError} once cancelled. */
  beforeWrite(provisional: boolean): void {
    if (this.#state === "cancelled") throw new WritesRefusedError();
    if (!provisional) this.#state = "writing";
  }

  /** Cancels the scope unless a durable write was sent; true when cancelled (nothing was written). */
  cancel(): boolean {
    if (this.#state === "writing") return false;
    this.#state = "cancelled";
    return true;
  }
}

/**
 * A write refused because its request was already answered "not done, retry it". SQLSTATE 57P01
 * (admin_shutdown): it reads as the database being unavailable because the server is stopping.
 */
export class WritesRefusedError extends Error {
  readonly code = "57P01";
  constructor() {
    super("the server is shutting down and this request was already answered 503; its write is refused");
    this.name = "WritesRefusedError";
  }
}

const current = new AsyncLocalStorage<{ scope: WriteScope; provisional: boolean }>();

/** Runs `fn` (and everything it starts) in `scope`. */
export function runInWriteScope<T>(scope: WriteScope, fn: () => T): T {
  return current.run({ scope, provisional: false }, fn);
}

/** The state of the write scope this code runs in (`writing` once a durable write was sent), or null outside one. */
export function writeScopeState(): "open" | "writing" | "cancelled" | null {
  return current.getStore()?.scope.state ?? null;
}

/**
 * Runs `fn` with its writes marked provisional: bookkeeping that lapses by itself if the work never
 * finishes (a reservation with an expiry). Such writes do not commit the request to finishing; after
 * a cancel they are refused like any other.
 */
export function provisionalWrites<T>(fn: () => T): T {
  const at = current.getStore();
  if (!at) return fn();
  return current.run({ scope: at.scope, provisional: true }, () => {
    const out = fn();
    // A Drizzle query is lazy: it is sent when awaited. Awaited here, inside the provisional context, it
    // is sent as provisional; awaited by the caller, it would be sent in the caller's (durable) context.
    return (isThenable(out) ? Promise.resolve(out) : out) as T;
  });
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof (x as { then?: unknown } | null)?.then === "function";
}

// Statements that only read. Anything else (insert, update, delete, a CTE, DDL…) counts as a write.
const READ = /^\s*(?:select|show|explain|values)\b/i;

/** Called with each statement the app sends: a write in a cancelled scope throws; others mark it. */
export function checkStatement(query: string): void {
  const at = current.getStore();
  if (!at || READ.test(query)) return;
  at.scope.beforeWrite(at.provisional);
}
