import { Elysia } from "elysia";

/** The methods the /api/v1 routes answer. */
const METHODS = "GET, POST, PUT, PATCH, DELETE";
/** Request headers a browser page may send: the key, JSON bodies, guarded writes, retries, tracing. */
const ALLOWED_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-Id";
/** Answer headers a page may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  "ETag",
  "Location",
  "Retry-After",
  "Idempotent-Replayed",
  "X-Request-Id",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "RateLimit-Policy",
  "WWW-Authenticate",
].join(", ");
/** How long a browser may reuse a preflight answer, in seconds. */
const MAX_AGE_S = 600;

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

function underApi(url: string): boolean {
  const path = pathOf(url);
  return path === "/api/v1" || path.startsWith("/api/v1/") || path.startsWith("/api/v1?");
}

/**
 * The one answer that sets a cookie: the connect start marks the browser that started it (decision
 * 1030), so an allowed origin may call it with credentials. The API never reads cookies for auth.
 */
const CREDENTIALED_PATH = "/api/v1/social/accounts/connect";
const credentialed = (url: string) => pathOf(url).split("?")[0] === CREDENTIALED_PATH;

/**
 * CORS for /api/v1 (decision 0712): pages of the `CORS_ORIGINS` origins get `Access-Control-Allow-Origin`
 * on every answer, errors included, and their preflights (OPTIONS with Access-Control-Request-Method)
 * answered 204 before authentication. Other origins get no CORS headers. Keys travel as bearer tokens,
 * never cookies, so credentials are not allowed, except on the connect start whose answer sets the
 * connect cookie (decision 1030). Nothing is added when no origin is configured.
 */
export function corsPlugin(origins: readonly string[]) {
  const allowed = new Set(origins);
  const plugin = new Elysia({ name: "cors" });
  if (allowed.size === 0) return plugin;
  return plugin.onRequest(({ request, set }) => {
    if (!underApi(request.url)) return;
    set.headers.vary = "Origin";
    const origin = request.headers.get("origin");
    const preflight = request.method === "OPTIONS" && request.headers.has("access-control-request-method");
    if (!origin || !allowed.has(origin)) {
      // A refused origin's preflight gets an answer without CORS headers: the browser stops there.
      if (preflight) return new Response(null, { status: 204, headers: { vary: "Origin" } });
      return;
    }
    if (preflight)
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-origin": origin,
          "access-control-allow-methods": METHODS,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": String(MAX_AGE_S),
          ...(credentialed(request.url) ? { "access-control-allow-credentials": "true" } : {}),
          vary: "Origin",
        },
      });
    set.headers["access-control-allow-origin"] = origin;
    if (credentialed(request.url)) set.headers["access-control-allow-credentials"] = "true";
    set.headers["access-control-expose-headers"] = EXPOSED_HEADERS;
  });
}
