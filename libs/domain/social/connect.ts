import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { socialOauthStates } from "@site/db";
import {
  AppError,
  type Context,
  decryptSecret,
  encryptSecret,
  type Principal,
  validationError,
} from "@site/domain/core";
import { and, eq, gt, isNotNull, isNull, lt } from "drizzle-orm";
import { storeAccount } from "./accounts.ts";
import { connectCookieMatches, OAUTH_STATE_SECONDS } from "./connect_cookie.ts";
import type { ConnectConfirmBody, ConnectStartBody, SocialAccountView } from "./models.ts";
import { type OAuthPort, PlatformError, type SocialPlatform } from "./platform.ts";

/** The address the platforms send the user back to: this service's callback for the platform. */
export function callbackUrl(ctx: Context, platform: SocialPlatform): string {
  return `${ctx.config.publicBaseUrl}/api/v1/social/oauth/${platform}/callback`;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

/**
 * Starts connecting an account with OAuth (authorization code): a single-use `state` bound to the
 * organization and the starting user, a PKCE verifier where the platform takes one, both kept for OAUTH_STATE_SECONDS; the
 * authorize URL asks for the scopes that yield a refresh token. 501 NOT_CONFIGURED without the
 * platform's client id.
 */
export async function startConnect(
  ctx: Context,
  principal: Principal,
  input: ConnectStartBody,
  oauth: OAuthPort,
): Promise<{ authorizeUrl: string; state: string }> {
  if (!oauth.configured(input.platform))
    throw new AppError(
      "NOT_CONFIGURED",
      `connecting ${input.platform} needs SOCIAL_${input.platform.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET`,
    );
  let redirectUri: string | null = null;
  if (input.redirectUri !== undefined) {
    let u: URL | null = null;
    try {
      u = new URL(input.redirectUri);
    } catch {}
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:"))
      throw validationError("redirectUri", "an http or https URL");
    // Only the operator's own front ends: any other would make the callback an open redirect
    // (contract: SOCIAL_REDIRECT_ORIGINS, default PUBLIC_BASE_URL's origin).
    if (!ctx.config.social.redirectOrigins.includes(u.origin))
      throw validationError(
        "redirectUri",
        `must be on an origin of SOCIAL_REDIRECT_ORIGINS (${ctx.config.social.redirectOrigins.join(", ")})`,
      );
    redirectUri = u.toString();
  }
  const state = randomBytes(24).toString("base64url");
  const pair = oauth.usesPkce(input.platform) ? pkce() : null;
  await ctx.db.insert(socialOauthStates).values({
    state,
    orgId: principal.orgId,
    userId: principal.userId,
    platform: input.platform,
    codeVerifier: pair?.verifier ?? null,
    redirectUri,
    expiresAt: new Date(ctx.clock.now().getTime() + OAUTH_STATE_SECONDS * 1000),
  });
  const authorizeUrl = oauth.authorizeUrl(input.platform, {
    state,
    redirectUri: callbackUrl(ctx, input.platform),
    codeChallenge: pair?.challenge ?? null,
  });
  return { authorizeUrl, state };
}

/** A connection the platform granted, waiting for the starting user's confirmation (decision 1016). */
export type PendingConnection = {
  state: string;
  /** The one-time confirmation token; only the browser that came back from the platform gets it. */
  confirm: string;
  platform: SocialPlatform;
  accountId: string;
  displayName: string | null;
  expiresAt: string;
};

/**
 * What the callback ends with, and where to send the user: the stored account (the browser that started
 * the connect came back), a pending connection (another browser came back: the starting user confirms),
 * or an error code.
 */
export type ConnectOutcome =
  | { ok: true; account: SocialAccountView; redirectUri: string | null }
  | { ok: true; pending: PendingConnection; redirectUri: string | null }
  | { ok: false; error: AppError; code: string; redirectUri: string | null };

/** How long a granted connection waits for its confirmation. */
export const CONFIRM_SECONDS = 600;

const sha256 = (v: string) => createHash("sha256").update(v).digest("hex");

type Pending = {
  platform: SocialPlatform;
  accountId: string;
  displayName: string | null;
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string | null;
  permissions: string[];
};

/**
 * The platform's callback: the `state` must be one this service issued for this platform, unexpired and
 * unused (it is spent here, atomically, so a replayed callback is refused); the code is exchanged for
 * tokens and the user identified. When the browser carries the connect cookie of this state
 * (`browserCookies`, the `sca_connect` values it sent) it is the browser that started the connect, and
 * the account is stored at once with its refresh token and expiry (a reconnection when it already
 * exists), as the contract answers. Any other browser gets the confirmation step: the tokens wait for
 * the starting user's confirmation (decisions 1016, 1030). A refused code is an error too.
 */
export async function finishConnect(
  ctx: Context,
  platform: SocialPlatform,
  query: { code?: string; state?: string; error?: string },
  oauth: OAuthPort,
  browserCookies: string[] = [],
): Promise<ConnectOutcome> {
  const now = ctx.clock.now();
  const [spent] = query.state
    ? await ctx.db
        .update(socialOauthStates)
        .set({ usedAt: now })
        .where(
          and(
            eq(socialOauthStates.state, query.state),
            eq(socialOauthStates.platform, platform),
            isNull(socialOauthStates.usedAt),
            gt(socialOauthStates.expiresAt, now),
          ),
        )
        .returning()
    : [];
  if (!spent)
    return {
      ok: false,
      code: "state_mismatch",
      error: validationError("state", "unknown, expired or already used authorization state"),
      redirectUri: null,
    };
  const fail = (code: string, message: string): ConnectOutcome => ({
    ok: false,
    code,
    error: new AppError("VALIDATION_ERROR", message, [{ field: "code", message }]),
    redirectUri: spent.redirectUri,
  });
  if (query.error) return fail(query.error.slice(0, 100), `the platform answered ${query.error}`);
  if (!query.code) return fail("invalid_request", "code: required");
  let tokens: Awaited<ReturnType<OAuthPort["exchange"]>>;
  try {
    tokens = await oauth.exchange(platform, {
      code: query.code,
      redirectUri: callbackUrl(ctx, platform),
      codeVerifier: spent.codeVerifier,
      now,
    });
  } catch (err) {
    const e = err instanceof PlatformError ? err : new PlatformError("transient", String(err));
    if (e.kind === "transient")
      return {
        ok: false,
        code: "platform_unavailable",
        error: new AppError("SERVICE_UNAVAILABLE", e.message),
        redirectUri: spent.redirectUri,
      };
    return fail("invalid_grant", e.message);
  }
  const who = tokens.accountId
    ? { accountId: tokens.accountId, displayName: null }
    : await oauth.identify(platform, tokens.accessToken).catch(() => null);
  if (!who) return fail("identity_unknown", `${platform}: could not tell which account the token belongs to`);
  const scopes = tokens.scopes ?? oauth.scopes(platform);
  // Instagram Login names its insights scope instagram_business_manage_insights: it opens the same reads.
  const permissions = scopes.includes("instagram_business_manage_insights")
    ? [...scopes, "instagram_manage_insights"]
    : scopes;
  // States older than a day are of no use to anyone.
  await ctx.db
    .delete(socialOauthStates)
    .where(lt(socialOauthStates.expiresAt, new Date(now.getTime() - 86_400_000)));
  // The browser that started the connect came back (it holds the HttpOnly cookie of this state, set on
  // the connect answer): the account is the starting user's own, stored now (contract, decision 1030).
  if (connectCookieMatches(ctx.config.secretKey, spent.state, browserCookies)) {
    const { account } = await storeAccount(ctx, spent.orgId, {
      platform,
      accountId: who.accountId,
      displayName: who.displayName,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: tokens.expiresAt,
      permissions,
      // The tier is not in the token: a reconnection keeps the stored one, a new X account reads as free.
      tier: null,
    });
    await ctx.db
      .update(socialOauthStates)
      .set({ confirmedAt: now })
      .where(eq(socialOauthStates.state, spent.state));
    return { ok: true, account, redirectUri: spent.redirectUri };
  }
  // Another browser: the tokens wait, encrypted, for the starting user to confirm with the token only
  // this browser gets; a victim who approves someone else's authorize URL never links their account
  // into another organization (decision 1016).
  const pending: Pending = {
    platform,
    accountId: who.accountId,
    displayName: who.displayName,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: tokens.expiresAt?.toISOString() ?? null,
    permissions,
  };
  const confirm = randomBytes(24).toString("base64url");
  const expiresAt = new Date(now.getTime() + CONFIRM_SECONDS * 1000);
  await ctx.db
    .update(socialOauthStates)
    .set({
      pendingCiphertext: encryptSecret(ctx.config.secretKey, JSON.stringify(pending)),
      confirmHash: sha256(confirm),
      expiresAt,
    })
    .where(eq(socialOauthStates.state, spent.state));
  return {
    ok: true,
    pending: {
      state: spent.state,
      confirm,
      platform,
      accountId: who.accountId,
      displayName: who.displayName,
      expiresAt: expiresAt.toISOString(),
    },
    redirectUri: spent.redirectUri,
  };
}

/**
 * Confirms a connection the platform granted: only the user whose API key started it, in the same
 * organization, with the confirmation token the callback handed to the browser that came back. The
 * pending tokens are taken atomically (one confirmation); a confirmation by another user spends them
 * (403), so a victim's landing can never be completed by anyone. Unknown, expired or a wrong token: 400.
 */
export async function confirmConnect(
  ctx: Context,
  principal: Principal,
  input: ConnectConfirmBody,
): Promise<SocialAccountView> {
  const now = ctx.clock.now();
  const refused = () =>
    validationError("confirm", "unknown, expired or already confirmed connection, or a wrong confirmation");
  const [row] = await ctx.db
    .select()
    .from(socialOauthStates)
    .where(
      and(
        eq(socialOauthStates.state, input.state),
        isNotNull(socialOauthStates.pendingCiphertext),
        isNull(socialOauthStates.confirmedAt),
        gt(socialOauthStates.expiresAt, now),
      ),
    );
  if (!row?.confirmHash) throw refused();
  const given = Buffer.from(sha256(input.confirm));
  const same =
    given.length === row.confirmHash.length && timingSafeEqual(given, Buffer.from(row.confirmHash));
  if (!same) throw refused();
  const [taken] = await ctx.db
    .update(socialOauthStates)
    .set({ confirmedAt: now, pendingCiphertext: null })
    .where(and(eq(socialOauthStates.state, input.state), isNull(socialOauthStates.confirmedAt)))
    .returning();
  // The row read above holds the tokens (written once by the callback); the update spent them.
  if (!taken || !row.pendingCiphertext) throw refused();
  if (taken.orgId !== principal.orgId || taken.userId !== principal.userId) {
    ctx.log.warn("social connect confirmed by another user: refused and discarded", {
      platform: taken.platform,
    });
    throw new AppError(
      "FORBIDDEN",
      "only the user who started this connection can confirm it; it was discarded, start again",
    );
  }
  const p = JSON.parse(decryptSecret(ctx.config.secretKey, row.pendingCiphertext)) as Pending;
  const { account } = await storeAccount(ctx, taken.orgId, {
    platform: p.platform,
    accountId: p.accountId,
    displayName: p.displayName,
    accessToken: p.accessToken,
    refreshToken: p.refreshToken,
    expiresAt: p.expiresAt ? new Date(p.expiresAt) : null,
    permissions: p.permissions,
    // The tier is not in the token: a reconnection keeps the stored one, a new X account reads as free.
    tier: null,
  });
  return account;
}
