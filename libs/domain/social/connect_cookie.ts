import { createHmac, timingSafeEqual } from "node:crypto";

/** How long an authorization may take between connect and callback (the cookie lives as long). */
export const OAUTH_STATE_SECONDS = 600;

/** The cookie that marks the browser which started a connect (decision 1030). */
export const CONNECT_COOKIE = "sca_connect";
/** The only path it is sent to: the platforms' callbacks. */
export const CONNECT_COOKIE_PATH = "/api/v1/social/oauth";

/** The cookie's value for `state`: an HMAC of it under SECRET_KEY, so it proves nothing for another state. */
export function connectCookieValue(secretKey: string, state: string): string {
  return createHmac("sha256", secretKey).update(`social-connect-browser:${state}`).digest("base64url");
}

const attributes = (publicBaseUrl: string) =>
  // A cross-site front end (another site than the API's) sets it through a credentialed CORS call: only a
  // SameSite=None cookie is kept from such an answer, and None needs Secure. Over plain http (a local
  // deployment) Lax, which browsers still send on the platform's top-level redirect back to the callback.
  publicBaseUrl.startsWith("https:") ? "SameSite=None; Secure" : "SameSite=Lax";

/**
 * The Set-Cookie of the connect answer: HttpOnly, only for the callback path, as long as the state lives.
 * The browser that carries it back to the callback is the one that started the connect (decision 1030).
 */
export function connectSetCookie(
  config: { secretKey: string; publicBaseUrl: string },
  state: string,
): string {
  return `${CONNECT_COOKIE}=${connectCookieValue(config.secretKey, state)}; Path=${CONNECT_COOKIE_PATH}; HttpOnly; Max-Age=${OAUTH_STATE_SECONDS}; ${attributes(config.publicBaseUrl)}`;
}

/** The Set-Cookie that removes it once the callback used it. */
export function connectClearCookie(config: { publicBaseUrl: string }): string {
  return `${CONNECT_COOKIE}=; Path=${CONNECT_COOKIE_PATH}; HttpOnly; Max-Age=0; ${attributes(config.publicBaseUrl)}`;
}

/** The `sca_connect` values of a Cookie header (a browser may send more than one of a name). */
export function connectCookiesOf(cookieHeader: string | null): string[] {
  if (!cookieHeader) return [];
  return cookieHeader
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p.startsWith(`${CONNECT_COOKIE}=`))
    .map((p) => p.slice(CONNECT_COOKIE.length + 1));
}

/** True when one of `values` is the cookie of `state` (constant-time comparison). */
export function connectCookieMatches(secretKey: string, state: string, values: string[]): boolean {
  const want = Buffer.from(connectCookieValue(secretKey, state));
  return values.some((v) => {
    const got = Buffer.from(v);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}
