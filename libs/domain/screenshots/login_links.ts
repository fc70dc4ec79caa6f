import { type BrowserSession, findBrowser } from "@site/browser";
import { screenshotLoginLinks, siteBrowserSessions, sites } from "@site/db";
import {
  AppError,
  type Context,
  decryptSecret,
  encryptSecret,
  hashSecret,
  type Principal,
  randomToken,
} from "@site/domain/core";
import { getOwnSite } from "@site/domain/sites";
import { and, eq, getTableColumns, gt, isNull, sql } from "drizzle-orm";
import type { LoginLinkBody, LoginLinkView } from "./models.ts";
import { parsePublicPageUrl } from "./source_url.ts";

/** How long a login link stays valid (the spec's "about one hour"). */
export const LOGIN_LINK_TTL_MS = 60 * 60 * 1000;

/** The path of the hosted sign-in page for a token. */
export function loginPagePath(token: string): string {
  return `/screenshot-login/${token}`;
}

/** Creates a one-hour sign-in link for a login-gated page (free); interactive when a browser is here. */
export async function createLoginLink(
  ctx: Context,
  principal: Principal,
  siteId: string,
  body: LoginLinkBody,
): Promise<LoginLinkView> {
  const site = await getOwnSite(ctx, principal, siteId);
  const sourceUrl = parsePublicPageUrl(body.url, ctx.config.fetchAllowHosts, {
    localNetwork: ctx.config.allowLocalNetworkForDevelopment,
  });
  const token = randomToken(32);
  const expiresAt = new Date(ctx.clock.now().getTime() + LOGIN_LINK_TTL_MS);
  const interactive = findBrowser(ctx.config.chromiumPath) !== null;
  await ctx.db.insert(screenshotLoginLinks).values({
    siteId: site.id,
    tokenHash: hashSecret(token),
    sourceUrl,
    interactive,
    expiresAt,
  });
  return {
    loginUrl: `${ctx.config.publicBaseUrl}${loginPagePath(token)}`,
    sourceUrl,
    interactive,
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * An open login link (unused and unexpired) by its token, with its site's organization; 404 NOT_FOUND
 * otherwise, expired or reused alike.
 */
export async function openLoginLink(ctx: Context, token: string) {
  const [link] = await ctx.db
    .select({ ...getTableColumns(screenshotLoginLinks), orgId: sites.orgId })
    .from(screenshotLoginLinks)
    .innerJoin(sites, eq(sites.id, screenshotLoginLinks.siteId))
    .where(
      and(
        eq(screenshotLoginLinks.tokenHash, hashSecret(token)),
        isNull(screenshotLoginLinks.usedAt),
        gt(screenshotLoginLinks.expiresAt, ctx.clock.now()),
      ),
    )
    .limit(1);
  if (!link) throw new AppError("NOT_FOUND", "this sign-in link is unknown, expired or already used");
  return link;
}

/**
 * Ends a sign-in: marks the link used (once: a second Done is refused) and stores the browser's cookies
 * and local storage, encrypted with AES-256-GCM, as the site's session for every later screenshot.
 */
export async function finishLogin(ctx: Context, token: string, session: BrowserSession): Promise<void> {
  const ciphertext = encryptSecret(ctx.config.secretKey, JSON.stringify(session));
  await ctx.db.transaction(async (tx) => {
    const [link] = await tx
      .update(screenshotLoginLinks)
      .set({ usedAt: ctx.clock.now() })
      .where(
        and(
          eq(screenshotLoginLinks.tokenHash, hashSecret(token)),
          isNull(screenshotLoginLinks.usedAt),
          gt(screenshotLoginLinks.expiresAt, ctx.clock.now()),
        ),
      )
      .returning({ siteId: screenshotLoginLinks.siteId });
    if (!link) throw new AppError("NOT_FOUND", "this sign-in link is unknown, expired or already used");
    await tx
      .insert(siteBrowserSessions)
      .values({ siteId: link.siteId, ciphertext })
      .onConflictDoUpdate({ target: siteBrowserSessions.siteId, set: { ciphertext, updatedAt: sql`now()` } });
  });
}

/** The site's stored browser session, decrypted; null when none (or unreadable with this key). */
export async function loadBrowserSession(ctx: Context, siteId: string): Promise<BrowserSession | null> {
  const [row] = await ctx.db
    .select()
    .from(siteBrowserSessions)
    .where(eq(siteBrowserSessions.siteId, siteId))
    .limit(1);
  if (!row) return null;
  try {
    return JSON.parse(decryptSecret(ctx.config.secretKey, row.ciphertext)) as BrowserSession;
  } catch (err) {
    ctx.log.warn("stored browser session unreadable", { siteId, cause: err });
    return null;
  }
}
