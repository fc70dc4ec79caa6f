/** What of a PostgreSQL error may be logged: never `detail` (row values), `where` or the statement. */
const PG_FIELDS = ["code", "severity", "message", "routine", "table_name", "column_name", "constraint_name"];

/** The stack's frames without its first line, which repeats the message (and may hold SQL). */
function framesOf(err: Error): string | undefined {
  const frames = (err.stack ?? "")
    .split("\n")
    .filter((l) => /^\s+at /.test(l))
    .slice(0, 12)
    .map((l) => l.trim());
  return frames.length > 0 ? frames.join("\n") : undefined;
}

/** A failed Drizzle query: its message is "Failed query: <statement>\nparams: <values>". */
function isQueryError(err: Error): err is Error & { query: string } {
  return typeof (err as { query?: unknown }).query === "string" && "params" in err;
}

/** A postgres.js server error (a five-character SQLSTATE and a severity). */
function isPostgresError(err: Error): boolean {
  const e = err as { code?: unknown; severity?: unknown };
  return typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === "string";
}

/**
 * An error as a log field: name, message, code and stack frames through its cause chain, never a SQL
 * statement or its parameters; `withQuery` (debug level) adds a failed query's statement, still without
 * parameters; `withStack: false` leaves the frames out.
 */
export function describeError(
  err: unknown,
  opts: { withQuery?: boolean; withStack?: boolean } = {},
): Record<string, unknown> | string {
  const walk = (e: unknown, depth: number): Record<string, unknown> | string => {
    if (!(e instanceof Error)) return String(e).slice(0, 1000);
    const out: Record<string, unknown> = { name: e.name };
    if (isQueryError(e)) {
      out.message = "database query failed";
      if (opts.withQuery) out.query = e.query;
    } else if (isPostgresError(e)) {
      for (const k of PG_FIELDS) {
        const v = (e as unknown as Record<string, unknown>)[k];
        if (typeof v === "string") out[k] = v;
      }
    } else {
      out.message = e.message;
      const code = (e as { code?: unknown }).code;
      if (typeof code === "string" || typeof code === "number") out.code = code;
    }
    const frames = opts.withStack === false ? undefined : framesOf(e);
    if (frames) out.stack = frames;
    if (e.cause !== undefined && depth < 4) out.cause = walk(e.cause, depth + 1);
    return out;
  };
  return walk(err, 0);
}
