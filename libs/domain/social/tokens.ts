import { socialAccounts } from "@site/db";
import { type Context, decryptSecret, encryptSecret } from "@site/domain/core";
import { and, eq, gt, inArray, isNotNull, isNull, lte } from "drizzle-orm";
import {
  type AdapterAccount,
  type PlatformAdapters,
  PlatformError,
  type SocialPlatform,
} from "./platform.ts";
import { recordReconnectRequired } from "./webhook_events.ts";

/** A token is renewed when it expires within this margin (a publish or a read takes less). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

type AccountRow = typeof socialAccounts.$inferSelect;

/** An account row as an adapter sees it, with its token decrypted. */
export function adapterAccountOf(ctx: Context, r: AccountRow): AdapterAccount & { id: string } {
  return {
    id: r.id,
    platform: r.platform as SocialPlatform,
    accountId: r.accountId,
    displayName: r.displayName,
    accessToken: decryptSecret(ctx.config.secretKey, r.tokenCiphertext),
    permissions: r.permissions,
    tier: r.tier,
  };
}

/** True when the row's token must be renewed before use at `now`. */
export function needsRenewal(r: { tokenExpiresAt: Date | null }, now: Date): boolean {
  return r.tokenExpiresAt !== null && r.tokenExpiresAt.getTime() - now.getTime() <= REFRESH_MARGIN_MS;
}

/**
 * The account ready for a platform call at `now`: its token renewed first when it expires within the
 * margin (or when `due` says so: the background renewal of long-lived tokens). The renewal runs under the account row's lock (SELECT … FOR UPDATE) and re-checks the expiry
 * once it holds it, so two processes never renew one token twice (a rotating refresh token used twice
 * would be refused). A refusal marks the account `reconnect_required` and throws a PlatformError `auth`;
 * an account already marked throws it at once. A transient failure keeps a token that is still valid.
 */
export async function readyAccount(
  ctx: Context,
  accountRowId: string,
  adapters: PlatformAdapters,
  now: Date,
  due: (r: { tokenExpiresAt: Date | null }, now: Date) => boolean = needsRenewal,
): Promise<AdapterAccount & { id: string }> {
  const [row] = await ctx.db.select().from(socialAccounts).where(eq(socialAccounts.id, accountRowId));
  if (!row) throw new PlatformError("auth", "the account is no longer connected");
  if (row.status !== "connected")
    throw new PlatformError(
      "auth",
      `${row.platform}: the account must be reconnected (its token was refused)`,
    );
  const renew = adapters[row.platform as SocialPlatform]?.renew;
  if (!due(row, now) || !renew) return adapterAccountOf(ctx, row);
  const outcome = await ctx.db.transaction(async (tx) => {
    const [locked] = await tx
      .select()
      .from(socialAccounts)
      .where(eq(socialAccounts.id, accountRowId))
      .for("update");
    if (locked?.status !== "connected") return { refused: true as const, row: locked ?? row };
    if (!due(locked, now)) return { refused: false as const, row: locked };
    const current = adapterAccountOf(ctx, locked);
    const refresh = locked.refreshTokenCiphertext
      ? decryptSecret(ctx.config.secretKey, locked.refreshTokenCiphertext)
      : null;
    try {
      const tokens = await renew(
        { accessToken: current.accessToken, refreshToken: refresh, accountId: current.accountId },
        now,
      );
      const [updated] = await tx
        .update(socialAccounts)
        .set({
          tokenCiphertext: encryptSecret(ctx.config.secretKey, tokens.accessToken),
          refreshTokenCiphertext: tokens.refreshToken
            ? encryptSecret(ctx.config.secretKey, tokens.refreshToken)
            : null,
          tokenExpiresAt: tokens.expiresAt,
        })
        .where(eq(socialAccounts.id, accountRowId))
        .returning();
      ctx.log.info("social token renewed", { platform: locked.platform, accountId: accountRowId });
      return { refused: false as const, row: updated! };
    } catch (err) {
      const e = err instanceof PlatformError ? err : new PlatformError("transient", String(err));
      if (e.kind !== "auth") {
        // The platform could not answer now: a token that has not expired yet is still usable.
        if (locked.tokenExpiresAt && locked.tokenExpiresAt > now)
          return { refused: false as const, row: locked };
        throw e;
      }
      await tx
        .update(socialAccounts)
        .set({ status: "reconnect_required" })
        .where(eq(socialAccounts.id, accountRowId));
      await recordReconnectRequired(tx, { id: accountRowId, orgId: locked.orgId });
      ctx.log.warn("social token refresh refused", { platform: locked.platform, accountId: accountRowId });
      return { refused: true as const, row: locked, why: e.message };
    }
  });
  if (outcome.refused)
    throw new PlatformError(
      "auth",
      `${outcome.row.platform}: the platform refused to renew the token; reconnect the account${"why" in outcome && outcome.why ? ` (${outcome.why})` : ""}`,
    );
  return adapterAccountOf(ctx, outcome.row);
}

/** How long before a token without a refresh token expires the collector warns (once per token). */
export const EXPIRY_WARNING_DAYS = 7;

/** Platforms whose renewal needs a refresh token (Instagram and Threads tokens refresh themselves). */
const NEEDS_REFRESH_TOKEN = ["x", "reddit", "linkedin", "tiktok"];

/**
 * Accounts whose token cannot be renewed (no refresh token: LinkedIn gives them to partners only,
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens): a warning
 * is logged once when the token expires within EXPIRY_WARNING_DAYS, and an expired one is marked
 * `reconnect_required` (its `expiresAt` shows when). Run by every collector pass (decision 1012).
 */
export async function checkTokenExpiry(
  ctx: Context,
  now: Date,
): Promise<{ warned: number; expired: number }> {
  const soon = new Date(now.getTime() + EXPIRY_WARNING_DAYS * 86_400_000);
  const base = and(
    eq(socialAccounts.status, "connected"),
    isNull(socialAccounts.refreshTokenCiphertext),
    inArray(socialAccounts.platform, NEEDS_REFRESH_TOKEN),
  );
  // Marked and announced together (social.account.reconnect_required, decision 0843).
  const expired = await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(socialAccounts)
      .set({ status: "reconnect_required" })
      .where(and(base, lte(socialAccounts.tokenExpiresAt, now)))
      .returning({ id: socialAccounts.id, platform: socialAccounts.platform, orgId: socialAccounts.orgId });
    for (const a of rows) await recordReconnectRequired(tx, a);
    return rows;
  });
  for (const a of expired)
    ctx.log.warn("social token expired without a refresh token: the account must be reconnected", {
      accountId: a.id,
      orgId: a.orgId,
      platform: a.platform,
    });
  const warned = await ctx.db
    .update(socialAccounts)
    .set({ expiryWarnedAt: now })
    .where(
      and(
        base,
        gt(socialAccounts.tokenExpiresAt, now),
        lte(socialAccounts.tokenExpiresAt, soon),
        isNull(socialAccounts.expiryWarnedAt),
      ),
    )
    .returning({
      id: socialAccounts.id,
      platform: socialAccounts.platform,
      orgId: socialAccounts.orgId,
      expiresAt: socialAccounts.tokenExpiresAt,
    });
  for (const a of warned)
    ctx.log.warn("social token expires soon and cannot be renewed: reconnect the account before then", {
      accountId: a.id,
      orgId: a.orgId,
      platform: a.platform,
      expiresAt: a.expiresAt?.toISOString(),
    });
  return { warned: warned.length, expired: expired.length };
}

/**
 * Tokens that can be renewed only while still valid and at least 24 hours old, and that renew themselves
 * without a refresh token: Instagram's (https://developers.facebook.com/docs/instagram-platform/reference/refresh_access_token)
 * and Threads' (https://developers.facebook.com/docs/threads/get-started/long-lived-tokens) 60-day tokens.
 */
export const SELF_RENEWING_PLATFORMS = ["instagram", "threads"] as const;

/** The lifetime of a Meta long-lived token (60 days, the pages above). */
export const LONG_LIVED_TOKEN_MS = 60 * 86_400_000;

/**
 * How old a long-lived token is when the background renewal takes it: a few days, well past Meta's
 * 24-hour minimum, and far from its expiry, so a month of missed passes still leaves time (decision 1491).
 */
export const BACKGROUND_RENEW_AGE_MS = 3 * 86_400_000;

/**
 * True when a long-lived token is due for its background renewal at `now`: valid, and at least
 * BACKGROUND_RENEW_AGE_MS old, its age read from its expiry (issued LONG_LIVED_TOKEN_MS before it).
 * An expired one is not: Meta refuses it, and the account must be reconnected.
 */
export function dueForBackgroundRenewal(r: { tokenExpiresAt: Date | null }, now: Date): boolean {
  if (!r.tokenExpiresAt || r.tokenExpiresAt <= now) return false;
  return r.tokenExpiresAt.getTime() - now.getTime() <= LONG_LIVED_TOKEN_MS - BACKGROUND_RENEW_AGE_MS;
}

/**
 * Renews, in the background, every connected Instagram and Threads account whose token is due
 * (dueForBackgroundRenewal), whether or not it is used, through readyAccount (the row lock, the
 * re-check, `reconnect_required` on a refusal). Run by every collector pass (the metrics app's hourly
 * schedule). Answers how many were renewed and refused; one account's failure does not stop the others.
 */
export async function renewLongLivedTokens(
  ctx: Context,
  adapters: PlatformAdapters,
  now: Date,
): Promise<{ renewed: number; refused: number }> {
  const rows = await ctx.db
    .select({
      id: socialAccounts.id,
      platform: socialAccounts.platform,
      expiresAt: socialAccounts.tokenExpiresAt,
    })
    .from(socialAccounts)
    .where(
      and(
        eq(socialAccounts.status, "connected"),
        inArray(socialAccounts.platform, [...SELF_RENEWING_PLATFORMS]),
        isNotNull(socialAccounts.tokenExpiresAt),
        gt(socialAccounts.tokenExpiresAt, now),
        lte(
          socialAccounts.tokenExpiresAt,
          new Date(now.getTime() + LONG_LIVED_TOKEN_MS - BACKGROUND_RENEW_AGE_MS),
        ),
      ),
    );
  let renewed = 0;
  let refused = 0;
  for (const r of rows) {
    if (!adapters[r.platform as SocialPlatform]?.renew) continue;
    try {
      const ready = await readyAccount(ctx, r.id, adapters, now, dueForBackgroundRenewal);
      const [after] = await ctx.db
        .select({ expiresAt: socialAccounts.tokenExpiresAt })
        .from(socialAccounts)
        .where(eq(socialAccounts.id, ready.id));
      if (after?.expiresAt?.getTime() !== r.expiresAt?.getTime()) renewed++;
    } catch (err) {
      refused++;
      ctx.log.warn("social background token renewal failed", {
        accountId: r.id,
        platform: r.platform,
        cause: err,
      });
    }
  }
  return { renewed, refused };
}
