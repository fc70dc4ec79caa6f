import { PlatformError, parseRetryAfter } from "@site/domain/social";

/** A platform's answer: status, headers and the parsed JSON body (null when not JSON). */
export type ApiAnswer = { status: number; headers: Headers; body: unknown; raw?: string };

/** How long one platform call may take. */
const CALL_TIMEOUT_MS = 15_000;

/**
 * What went wrong on the wire, in the underlying error's own words: its code (ECONNREFUSED, ENOTFOUND,
 * a TLS code…) and message, or the deadline for a timeout — never just the class name.
 */
export function describeNetworkError(err: unknown): string {
  const e = err as { name?: string; code?: unknown; message?: string; cause?: unknown } | null;
  if (e?.name === "TimeoutError") return `timed out after ${CALL_TIMEOUT_MS} ms`;
  const inner = e?.cause as { code?: unknown; message?: string } | undefined;
  const code = typeof e?.code === "string" ? e.code : typeof inner?.code === "string" ? inner.code : null;
  const message = (e?.message || inner?.message || String(err)).trim();
  if (!code) return message;
  return message.includes(code) ? message : `${code}: ${message}`;
}

/** Calls a platform endpoint; network failures and timeouts become transient PlatformErrors. */
export async function callPlatform(url: string, init: RequestInit = {}): Promise<ApiAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  } catch (err) {
    throw new PlatformError("transient", `platform unreachable: ${describeNetworkError(err)}`);
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, body, raw: text };
}

/**
 * The moment an HTTP-date `Retry-After` names (RFC 9110 §10.2.3), or null for a delay in seconds or
 * none.
 */
function retryAfterDate(value: string | null): Date | null {
  if (!value || /^\s*\d+(\.\d+)?\s*$/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : new Date(at);
}

/**
 * The generic meaning of an HTTP failure status, for platforms without a richer error body. A 429 is
 * rate-limited with the wait given (else its `Retry-After`, RFC 6585 §4, RFC 9110 §10.2.3); a 5xx is
 * transient, with the wait of a `Retry-After` it carries (503, RFC 9110 §15.6.4).
 */
export function statusError(
  a: ApiAnswer,
  message: string,
  retryAfterMs?: number | null,
  retryAt?: Date | null,
): PlatformError {
  const header = a.headers.get("retry-after");
  if (a.status === 429)
    return new PlatformError("rate_limited", message, {
      status: 429,
      retryAfterMs: retryAfterMs ?? parseRetryAfter(header),
      retryAt: retryAt ?? (retryAfterMs == null ? retryAfterDate(header) : null),
    });
  if (a.status === 401) return new PlatformError("auth", message, { status: 401 });
  if (a.status === 403) return new PlatformError("permission", message, { status: 403 });
  if (a.status >= 500)
    return new PlatformError("transient", message, {
      status: a.status,
      retryAfterMs: parseRetryAfter(header),
      retryAt: retryAfterDate(header),
    });
  return new PlatformError("rejected", message, { status: a.status });
}

type GraphError = { error?: { message?: string; code?: number; type?: string } };

/**
 * The Graph API family (Instagram, Threads) reports errors as `{error: {code, message, type}}`:
 * 190 is an invalid or expired token, 10 and 200–299 a missing permission, 4/17/32/613 a rate limit.
 */
export function graphError(a: ApiAnswer): PlatformError {
  const e = (a.body as GraphError | null)?.error;
  const code = e?.code ?? 0;
  const message = `${e?.type ?? "error"} #${code}: ${e?.message ?? `HTTP ${a.status}`}`;
  if (code === 190) return new PlatformError("auth", message, { status: a.status });
  if (code === 10 || (code >= 200 && code < 300))
    return new PlatformError("permission", message, { status: a.status });
  if ([4, 17, 32, 613].includes(code) || a.status === 429)
    return new PlatformError("rate_limited", message, {
      status: a.status,
      retryAfterMs: parseRetryAfter(a.headers.get("retry-after")) ?? 60_000,
    });
  return statusError(a, message);
}

/** True for a 2xx answer. */
export function ok(a: ApiAnswer): boolean {
  return a.status >= 200 && a.status < 300;
}

/** Joins a configured base URL and a platform path. */
export function endpoint(base: string, path: string, query?: Record<string, string>): string {
  const url = new URL(base.replace(/\/$/, "") + path);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

/** A number from a platform's JSON, or undefined when absent or not a number. */
export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/**
 * An id field read as the exact digits of the raw answer, whether the platform sent it as a JSON string
 * or as a JSON number (Meta's token answers, TikTok's int64 post ids): `JSON.parse` turns a number
 * beyond 2^53 into a neighbouring one (https://github.com/fbsamples/threads_api/issues/9). The first
 * element is taken when the field is an array. Null when absent.
 */
export function exactId(raw: string | undefined, field: string): string | null {
  const name = field.replace(/[^\w]/g, "");
  const m = new RegExp(`"${name}"\\s*:\\s*\\[?\\s*(?:"(\\d+)"|(\\d+))`).exec(raw ?? "");
  return m ? (m[1] ?? m[2] ?? null) : null;
}
