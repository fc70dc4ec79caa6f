/**
 * A `Retry-After` value in milliseconds from `now` (RFC 9110 §10.2.3: `HTTP-date / delay-seconds`);
 * null when absent or unreadable, 0 for a date already past.
 */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | null {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return null;
  if (/^\d{1,10}$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

/** The wait before try `attempts + 1`, with ±10% jitter; null when the schedule is spent. */
export function nextDelayMs(schedule: number[], attempts: number, random = Math.random): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (0.9 + 0.2 * random()));
}

/**
 * The wait before the next try after a failed one (decision 1401): the schedule's step, or, when the
 * receiver answered 429 or 503 with `Retry-After`, at least what it asked for, but never more than the
 * schedule's longest step (Standard Webhooks 1.0, "Delivery success and failure": a Retry-After "should
 * be taken into consideration when scheduling the next attempt"). Null once the schedule is spent:
 * a Retry-After does not add tries.
 */
export function nextTryDelayMs(
  schedule: number[],
  attempts: number,
  answer: { status: number | null; retryAfterMs: number | null },
  random = Math.random,
): number | null {
  const step = nextDelayMs(schedule, attempts, random);
  if (step === null) return null;
  if ((answer.status !== 429 && answer.status !== 503) || answer.retryAfterMs === null) return step;
  const longest = Math.max(...schedule) * 1000;
  return Math.max(step, Math.min(answer.retryAfterMs, longest));
}
