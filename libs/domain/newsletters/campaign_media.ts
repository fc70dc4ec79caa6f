import { AppError, type Context } from "@site/domain/core";
import {
  filesOfSite,
  grantMemberUrl,
  mediaPath,
  mediaRefBases,
  mintCampaignMediaToken,
  mintShareToken,
  readMediaRef,
} from "@site/domain/media";
import { type MediaRefInput, storableMediaRefs } from "@site/domain/sites";
import {
  type HtmlScan,
  MAX_HTML_DEPTH,
  rewriteCampaignHtml,
  scanCampaignHtml,
  tooDeep,
} from "./campaign_html.ts";
import { sanitizeCampaignHtml } from "./campaign_sanitize.ts";

/** How many problems a refusal lists. */
const MAX_PROBLEMS = 100;

/**
 * Checks campaign HTML for a write and returns it as stored: every media reference must be a file of
 * the site's library (or of the template host it was cloned from) by its canonical url. The library
 * check is the one page and settings references go through (storableMediaRefs of @site/domain/sites);
 * the HTML is read with an HTML parser (campaign_html.ts). Refused, each listed with its line: an
 * unknown or another site's file, a displayUrl (grant `k` or share token `t`), an outside image (mail
 * clients would fetch it from another host), scripts and event handlers. Stored references become
 * bare `/api/media/<key>` paths (an absolute URL under PUBLIC_BASE_URL is shortened).
 */
export async function storableCampaignHtml(ctx: Context, siteId: string, html: string): Promise<string> {
  if (html.includes("\u0000"))
    throw new AppError("VALIDATION_ERROR", "html: NUL characters are not allowed", [
      { field: "html", message: "NUL" },
    ]);
  const deep = tooDeep(html);
  if (deep)
    throw new AppError(
      "VALIDATION_ERROR",
      `html: elements are nested more than ${MAX_HTML_DEPTH} deep (line ${deep.line})`,
      [{ field: "html", line: deep.line, message: `nested more than ${MAX_HTML_DEPTH} deep` }],
    );
  const scan = scanCampaignHtml(html);
  const problems: Record<string, unknown>[] = scan.problems.map((p) => ({
    field: "html",
    line: p.line,
    where: p.where,
    message: p.message,
  }));
  const bases = mediaRefBases(ctx.config);
  const refs: MediaRefInput[] = [];
  const lineOf = new Map<string, number>();
  for (const u of scan.urls) {
    const ref = readMediaRef(bases, u.url);
    if (ref.kind === "outside") {
      if (u.kind === "resource" && !u.url.startsWith("#"))
        problems.push({
          field: "html",
          ref: u.url.slice(0, 300),
          line: u.line,
          where: u.where,
          message:
            "an outside image: mail would load it from another host; import it into the site's library and use its url (/api/media/<key>)",
        });
      else if (/\/api\/media\//.test(u.url))
        problems.push({
          field: "html",
          ref: u.url.slice(0, 300),
          line: u.line,
          where: u.where,
          message: "a media path on another host: use the image's url (/api/media/<key>)",
        });
      continue;
    }
    if (ref.kind === "path" && ref.query) {
      problems.push({
        field: "html",
        ref: u.url.slice(0, 300),
        line: u.line,
        where: u.where,
        message:
          "a displayUrl (signed with k or t): store the image's url (/api/media/<key>); it is signed when read and when sent",
      });
      continue;
    }
    refs.push({ field: "html", ref: u.url });
    if (!lineOf.has(u.url)) lineOf.set(u.url, u.line);
  }
  const checked = await storableMediaRefs(ctx, siteId, refs);
  for (const p of checked.problems) problems.push({ ...p, line: lineOf.get(String(p.ref)) });
  if (problems.length > 0) {
    problems.sort((a, b) => Number(a.line ?? 0) - Number(b.line ?? 0));
    const first = problems[0]!;
    throw new AppError(
      "VALIDATION_ERROR",
      `html: ${problems.length} problem(s); first at line ${first.line}: ${first.ref ? `${first.ref}: ` : ""}${first.message}`,
      problems.slice(0, MAX_PROBLEMS),
    );
  }
  // What is left outside the email allow-list is removed (decision 1113).
  return sanitizeCampaignHtml(rewriteCampaignHtml(html, scan, (url) => checked.stored.get(url) ?? url));
}

/**
 * Rewrites the media paths of stored campaign HTML through `sign`, for files of the site only
 * (filesOfSite: its library, and for a clone the host files its copied content carried): whatever the stored text says, a grant is never minted for another site's key
 * (the check at signing is independent of the check at write). Other URLs stay as they are.
 */
async function signStored(
  ctx: Context,
  siteId: string,
  html: string,
  sign: (key: string) => string,
  scan: HtmlScan = scanCampaignHtml(html),
): Promise<string> {
  const bases = mediaRefBases(ctx.config);
  const keys = scan.urls.flatMap((u) => {
    const ref = readMediaRef(bases, u.url);
    return ref.kind === "outside" ? [] : [ref.key];
  });
  const owned = await filesOfSite(ctx, siteId, keys);
  return rewriteCampaignHtml(html, scan, (url) => {
    const ref = readMediaRef(bases, url);
    if (ref.kind === "outside") return url;
    if (!owned.has(ref.key)) return mediaPath(ref.key);
    return sign(ref.key);
  });
}

/** The draft as a member reads it: media with member grants (`k`), like a library displayUrl. */
export function signCampaignForMember(ctx: Context, siteId: string, html: string): Promise<string> {
  return signStored(ctx, siteId, html, (key) => grantMemberUrl(ctx, siteId, key));
}

/**
 * The HTML as mailed: every media path an absolute URL on PUBLIC_BASE_URL with a share token `t`.
 * A campaign's deliveries carry campaign media tokens (NEWSLETTER_MAIL_MEDIA_TTL_S, a year by default:
 * mail is read late; revoked with the campaign's media generation, decision 1115); a test mail (no
 * `campaign`) carries plain share tokens of NEWSLETTER_MEDIA_TOKEN_TTL_S (30 days by default).
 */
export function signCampaignForMail(
  ctx: Context,
  siteId: string,
  html: string,
  campaign?: { id: string; mediaGeneration: number },
): Promise<string> {
  const base = ctx.config.publicBaseUrl;
  const token = campaign
    ? (key: string) =>
        mintCampaignMediaToken(ctx, {
          campaignId: campaign.id,
          generation: campaign.mediaGeneration,
          key,
          ttlSeconds: ctx.config.newsletter.mailMediaTtlSeconds,
        })
    : (key: string) =>
        mintShareToken(ctx, { siteId, key, ttlSeconds: ctx.config.newsletter.mediaTokenTtlSeconds });
  return signStored(ctx, siteId, html, (key) => `${base}${mediaPath(key)}?t=${token(key)}`);
}
