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

/** True when the failure is a check-constraint violation (optionally of the named constraint). */
export function isCheckViolation(err: unknown, constraint?: string): boolean {
  const { code, constraint: c } = pgCode(err);
  return code === "23514" && (!constraint || c === constraint);
}
