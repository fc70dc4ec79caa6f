import { isDatabaseUnavailable } from "@site/db";
import { QueueUnavailableError } from "@site/queue";
import { StoreError, storeErrorOf } from "@site/storage";
import { AppError } from "./errors.ts";

/** A dependency the service cannot work without. */
export type Dependency = "database" | "queue" | "storage";

/** What a failure says about our dependencies: which one is down and a sentence for people, or null. */
export type Outage = { dependency: Dependency; full: boolean; sentence: string };

const SENTENCES = {
  database: "The database is unavailable right now; try again shortly.",
  queue: "The render queue is unavailable right now; try again shortly.",
  storage: "File storage is unavailable right now; try again shortly.",
  storageFull: "File storage is full right now and cannot take new files; try again later.",
} as const;

/**
 * Classifies a failure: a database, Redis or object store that is down, full or too slow (see decision
 * 0800). Anything else (our bugs) is null and stays a 500. Follows `cause` chains, so a wrapped error
 * (Drizzle's, an import's) is recognized.
 */
export function outageOf(err: unknown, depth = 0): Outage | null {
  if (!err || typeof err !== "object" || depth > 5) return null;
  if (err instanceof AppError) return null;
  const store = err instanceof StoreError ? err : storeErrorOf(err);
  if (store?.reason === "full") return { dependency: "storage", full: true, sentence: SENTENCES.storageFull };
  if (store?.reason === "unavailable")
    return { dependency: "storage", full: false, sentence: SENTENCES.storage };
  if (err instanceof QueueUnavailableError)
    return { dependency: "queue", full: false, sentence: SENTENCES.queue };
  if (isDatabaseUnavailable(err))
    return { dependency: "database", full: false, sentence: SENTENCES.database };
  return outageOf((err as { cause?: unknown }).cause, depth + 1);
}

/** 503 SERVICE_UNAVAILABLE with Retry-After for an outage, naming the dependency in `details`. */
export function unavailableError(outage: Outage, retryAfterSeconds: number): AppError {
  // A full store frees space slower than a restarting server comes back.
  const seconds = outage.full ? Math.max(retryAfterSeconds, 60) : retryAfterSeconds;
  return new AppError(
    "SERVICE_UNAVAILABLE",
    outage.sentence,
    { dependency: outage.dependency, ...(outage.full ? { reason: "full" } : {}) },
    { "retry-after": String(seconds) },
  );
}

/** The 503 a failure means when a dependency is down, else null (the caller keeps its 500). */
export function asUnavailable(err: unknown, retryAfterSeconds: number): AppError | null {
  const outage = outageOf(err);
  return outage ? unavailableError(outage, retryAfterSeconds) : null;
}

/**
 * The sentence a user reads for a failure that ended a job (a render's `error`): an outage's sentence,
 * else the failure's own message without server paths, errno codes or stack lines, at most 300
 * characters — or `fallback` when nothing readable is left.
 */
export function publicFailureMessage(err: unknown, fallback = "The render failed."): string {
  const outage = outageOf(err);
  if (outage) return outage.sentence;
  const raw = err instanceof Error ? err.message : String(err ?? "");
  const code = (err as { code?: unknown } | null)?.code;
  const errno = (typeof code === "string" && /^E[A-Z]{2,}$/.test(code)) || /\bE[A-Z]{3,}:/.test(raw);
  if (errno && !(err instanceof AppError)) return fallback;
  // A query that failed (Drizzle's "Failed query: <SQL>") names tables and columns: never shown (1507).
  if (raw.startsWith("Failed query:")) return fallback;
  const msg = raw
    .split("\n")[0]!
    .replace(/(^|[\s(=:'"])\/(?!\/)[^\s)'"]*/g, "$1…")
    .trim()
    .slice(0, 300);
  return msg || fallback;
}
