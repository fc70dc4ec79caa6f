/** Finds the PostgreSQL error of a failure, through Drizzle's wrapping. */
function pgCode(err: unknown, depth = 0): { code?: string; constraint?: string } {
  if (!err || typeof err !== "object" || depth > 4) return {};
  const e = err as { code?: string; constraint_name?: string; constraint?: string; cause?: unknown };
  if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) {
    return { code: e.code, constraint: e.constraint_name ?? e.constraint };
  }
  return pgCode(e.cause, depth + 1);
}

/** True when the failure is a unique violation (optionally of the named constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const { code, constraint: c } = pgCode(err);
  return code === "23505" && (!constraint || c === constraint);
}

// Client-side failures of postgres.js and of the socket: the server is down, unreachable or gone.
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * True when the failure says the database is unavailable rather than that the query was wrong: the
 * connection could not be made or was lost, the server is starting, stopping or out of connections or
 * disk, or the statement ran past its timeout (SQLSTATE classes 08, 53 and 57).
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const e = err as { code?: unknown; cause?: unknown };
  if (typeof e.code === "string") {
    if (CONNECTION_CODES.has(e.code)) return true;
    if (/^(08|53|57)[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  return isDatabaseUnavailable(e.cause, depth + 1);
}
