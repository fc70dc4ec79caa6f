import type { Page } from "puppeteer-core";

const LOGIN_PATH =
  /(^|[/_.-])(log-?in|sign-?in|sign_in|signon|auth|authenticate|session|sessions\/new|sso|oauth2?|account\/login|users\/sign_in|wp-login\.php)([/_.?-]|$)/i;

/** True when a path looks like a sign-in page (/login, /signin, /auth/…, /users/sign_in, wp-login.php). */
export function isLoginPath(pathname: string): boolean {
  return LOGIN_PATH.test(pathname);
}

/** True when the page shows a visible password field. */
export async function hasPasswordField(page: Page): Promise<boolean> {
  return page
    .evaluate(() =>
      Array.from(document.querySelectorAll('input[type="password"]')).some((el) => {
        const r = (el as HTMLElement).getBoundingClientRect();
        const s = getComputedStyle(el as HTMLElement);
        return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
      }),
    )
    .catch(() => false);
}

/** The warning for a page that ended on a sign-in form, naming the redirect and the next step. */
export function loginWarning(requested: string, finalUrl: string): string {
  return (
    `login redirect: ${requested} redirected to a sign-in form at ${finalUrl}; the image shows the sign-in screen. ` +
    "Request a login link with POST /api/v1/sites/<site_id>/media/screenshot-login for this URL, sign in, " +
    "then repeat the screenshot request with recapture: true."
  );
}

/** Decides whether the page ended on a sign-in form: redirected to a login path, or a password field after a redirect. */
export async function detectLoginRedirect(
  page: Page,
  requested: string,
  finalUrl: string,
): Promise<string | null> {
  const a = new URL(requested);
  const b = new URL(finalUrl);
  const redirected = a.origin !== b.origin || a.pathname !== b.pathname;
  if (!redirected) return null;
  if (isLoginPath(b.pathname) || (await hasPasswordField(page))) return loginWarning(requested, finalUrl);
  return null;
}
