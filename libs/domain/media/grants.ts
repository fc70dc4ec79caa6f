import { type Context, safeEqual, sign } from "@site/domain/core";

/**
 * Who a delivery grant `k` is for: visitors of a published site, members previewing, or members of an
 * organization reading its social library (`org`: the grant names the organization, not a site).
 */
export type GrantKind = "visitor" | "member" | "org";

/** How long a member grant (displayUrl) stays valid: short, it is for immediate preview only. */
export const MEMBER_GRANT_SECONDS = 15 * 60;
/** How long a visitor grant minted for a published page stays valid (unpublishing revokes it sooner). */
export const VISITOR_GRANT_SECONDS = 24 * 3600;
/** The default and the longest lifetime of a share token `t`. */
export const SHARE_TOKEN_SECONDS = { default: 7 * 24 * 3600, max: 90 * 24 * 3600 } as const;

const KIND_CODE = { visitor: "v", member: "m", org: "o" } as const;
const SITE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The canonical delivery path of a storage key: the value pages persist. */
export function mediaPath(key: string): string {
  // Keys the library makes need no escaping: skip the per-segment encoding (a list builds 100 of these).
  if (PLAIN_KEY.test(key)) return `/api/media/${key}`;
  return `/api/media/${key.split("/").map(encodeURIComponent).join("/")}`;
}

const PLAIN_KEY = /^[A-Za-z0-9._~/-]*$/;

/**
 * Default lifetimes end on a whole minute (decision 0810): a grant lives between its lifetime and a
 * minute more, so every grant of one path minted within that minute is the same string — a browser
 * caches the image, and the signature is computed once per minute (a list page signs 50).
 */
export const GRANT_STEP_SECONDS = 60;

function expiry(ctx: Context, seconds: number, step = 1): number {
  return Math.ceil((Math.floor(ctx.clock.now().getTime() / 1000) + seconds) / step) * step;
}

// Signatures of default-lifetime grants by secret, then (kind, site, key, expiry); a generation
// lasts one step, so the map holds at most the paths signed within a minute (capped besides).
const signed = new Map<string, { exp: number; sigs: Map<string, string> }>();
const SIGNED_MAX = 50_000;

function grantSignature(ctx: Context, kind: string, siteId: string, key: string, exp: number): string {
  return sign(ctx.config.secretKey, "media-grant", `${kind}\n${siteId}\n${key}\n${exp}`);
}

function memoSignature(ctx: Context, kind: string, siteId: string, key: string, exp: number): string {
  let gen = signed.get(ctx.config.secretKey);
  if (!gen || gen.exp !== exp || gen.sigs.size >= SIGNED_MAX) {
    if (signed.size > 16) signed.clear();
    gen = { exp, sigs: new Map() };
    signed.set(ctx.config.secretKey, gen);
  }
  const id = `${kind}\n${siteId}\n${key}`;
  let sig = gen.sigs.get(id);
  if (sig === undefined) {
    sig = grantSignature(ctx, kind, siteId, key, exp);
    gen.sigs.set(id, sig);
  }
  return sig;
}

/** When a member grant minted now expires (default lifetime, on the minute). */
export function memberGrantExpiry(ctx: Context): number {
  return expiry(ctx, MEMBER_GRANT_SECONDS, GRANT_STEP_SECONDS);
}

/** Mints a delivery grant `k`: an HMAC over (kind, site, storage key, expiry), so it opens that one path. */
export function mintGrant(
  ctx: Context,
  input: { kind: GrantKind; siteId: string; key: string; ttlSeconds?: number },
): string {
  const code = KIND_CODE[input.kind];
  if (input.ttlSeconds !== undefined) {
    const exp = expiry(ctx, input.ttlSeconds);
    return `${code}.${input.siteId}.${exp}.${grantSignature(ctx, code, input.siteId, input.key, exp)}`;
  }
  const ttl = input.kind === "visitor" ? VISITOR_GRANT_SECONDS : MEMBER_GRANT_SECONDS;
  const exp = expiry(ctx, ttl, GRANT_STEP_SECONDS);
  return `${code}.${input.siteId}.${exp}.${memoSignature(ctx, code, input.siteId, input.key, exp)}`;
}

/** Reads a grant for `key`: its kind and site when the signature matches and it has not expired, else null. */
export function readGrant(
  ctx: Context,
  key: string,
  grant: string,
): { kind: GrantKind; siteId: string } | null {
  const [code, siteId, exp, sig, extra] = grant.split(".");
  if (extra !== undefined || !code || !siteId || !exp || !sig) return null;
  const kind = code === "v" ? "visitor" : code === "m" ? "member" : code === "o" ? "org" : null;
  if (!kind || !SITE.test(siteId) || !/^\d{1,12}$/.test(exp)) return null;
  if (!safeEqual(sig, grantSignature(ctx, code, siteId, key, Number(exp)))) return null;
  if (Number(exp) * 1000 <= ctx.clock.now().getTime()) return null;
  return { kind, siteId };
}

/** Mints a share token `t` for one path, for consumers without a session (social platforms, e-mail). */
export function mintShareToken(
  ctx: Context,
  input: { siteId: string; key: string; ttlSeconds?: number },
): string {
  const exp = expiry(ctx, input.ttlSeconds ?? SHARE_TOKEN_SECONDS.default);
  return `${input.siteId}.${exp}.${grantSignature(ctx, "s", input.siteId, input.key, exp)}`;
}

/** Reads a share token for `key`: its site when valid and unexpired, else null. */
export function readShareToken(ctx: Context, key: string, token: string): { siteId: string } | null {
  const [siteId, exp, sig, extra] = token.split(".");
  if (extra !== undefined || !siteId || !exp || !sig || !SITE.test(siteId) || !/^\d{1,12}$/.test(exp))
    return null;
  if (!safeEqual(sig, grantSignature(ctx, "s", siteId, key, Number(exp)))) return null;
  if (Number(exp) * 1000 <= ctx.clock.now().getTime()) return null;
  return { siteId };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Mints the share token of an image in a newsletter campaign's mail: `n.<campaign>.<generation>.<expiry>.<sig>`
 * for one path. It lives long (mail is read late: NEWSLETTER_MAIL_MEDIA_TTL_S, a year by default) and
 * is revocable: delivery honours it only while the campaign exists with that media generation
 * (decision 1115).
 */
export function mintCampaignMediaToken(
  ctx: Context,
  input: { campaignId: string; generation: number; key: string; ttlSeconds: number },
): string {
  const exp = expiry(ctx, input.ttlSeconds);
  const who = `${input.campaignId}:${input.generation}`;
  return `n.${input.campaignId}.${input.generation}.${exp}.${grantSignature(ctx, "n", who, input.key, exp)}`;
}

/** Reads a campaign media token for `key`: its campaign and generation when valid and unexpired, else null. */
export function readCampaignMediaToken(
  ctx: Context,
  key: string,
  token: string,
): { campaignId: string; generation: number } | null {
  const [code, campaignId, generation, exp, sig, extra] = token.split(".");
  if (code !== "n" || extra !== undefined || !campaignId || !generation || !exp || !sig) return null;
  if (!UUID_RE.test(campaignId) || !/^\d{1,9}$/.test(generation) || !/^\d{1,12}$/.test(exp)) return null;
  if (!safeEqual(sig, grantSignature(ctx, "n", `${campaignId}:${generation}`, key, Number(exp)))) return null;
  if (Number(exp) * 1000 <= ctx.clock.now().getTime()) return null;
  return { campaignId, generation: Number(generation) };
}

/** The delivery path of `key` with a visitor grant of the published site `siteId`. */
export function grantVisitorUrl(ctx: Context, siteId: string, key: string): string {
  return `${mediaPath(key)}?k=${mintGrant(ctx, { kind: "visitor", siteId, key })}`;
}

/**
 * The display URL of `key` with a short-lived member grant. Call it only for a caller who has access
 * to `siteId` (the route checked it); the render daemon and screenshot reads use it too.
 */
export function grantMemberUrl(ctx: Context, siteId: string, key: string): string {
  return `${mediaPath(key)}?k=${mintGrant(ctx, { kind: "member", siteId, key })}`;
}

/** The display URL of a social library file of `orgId` with a short-lived org member grant. */
export function grantOrgMemberUrl(ctx: Context, orgId: string, key: string): string {
  return `${mediaPath(key)}?k=${mintGrant(ctx, { kind: "org", siteId: orgId, key })}`;
}
