import { type Context, safeEqual, sign } from "@site/domain/core";

/** What a newsletter link does: confirm a pending address, or unsubscribe one. */
export type NewsletterAction = "confirm" | "unsubscribe";

/** How long a confirmation link works. */
export const CONFIRM_TOKEN_SECONDS = 7 * 24 * 3600;
/** Unsubscribe links must keep working for as long as people keep mail: ten years. */
export const UNSUBSCRIBE_TOKEN_SECONDS = 10 * 365 * 24 * 3600;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CODE = { confirm: "c", unsubscribe: "u" } as const;

/** A signed link token `<c|u>.<subscriber>.<expiry>.<hmac>`: it names one subscriber and one action. */
export function mintNewsletterToken(ctx: Context, action: NewsletterAction, subscriberId: string): string {
  const ttl = action === "confirm" ? CONFIRM_TOKEN_SECONDS : UNSUBSCRIBE_TOKEN_SECONDS;
  const exp = Math.floor(ctx.clock.now().getTime() / 1000) + ttl;
  const code = CODE[action];
  return `${code}.${subscriberId}.${exp}.${sign(ctx.config.secretKey, "newsletter-link", `${code}\n${subscriberId}\n${exp}`)}`;
}

/** The subscriber a token names for `action`, when its signature matches and it has not expired. */
export function readNewsletterToken(ctx: Context, action: NewsletterAction, token: string): string | null {
  const [code, id, exp, sig, extra] = token.split(".");
  if (extra !== undefined || code !== CODE[action] || !id || !exp || !sig) return null;
  if (!UUID.test(id) || !/^\d{1,12}$/.test(exp)) return null;
  if (!safeEqual(sig, sign(ctx.config.secretKey, "newsletter-link", `${code}\n${id}\n${exp}`))) return null;
  if (Number(exp) * 1000 <= ctx.clock.now().getTime()) return null;
  return id;
}

/** The public link that carries a token. */
export function newsletterLink(ctx: Context, action: NewsletterAction, subscriberId: string): string {
  const token = mintNewsletterToken(ctx, action, subscriberId);
  return `${ctx.config.publicBaseUrl}/api/v1/public/newsletter/${action}?token=${encodeURIComponent(token)}`;
}
