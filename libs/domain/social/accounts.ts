import { socialAccounts } from "@site/db";
import {
  AppError,
  type Context,
  encryptSecret,
  isUuid,
  notFound,
  type Principal,
  validationError,
} from "@site/domain/core";
import { and, desc, eq, inArray, ne, sql } from "drizzle-orm";
import { accountView } from "./account_view.ts";
import type { ConnectAccountBody, SocialAccountView } from "./models.ts";
import {
  type AdapterAccount,
  type CreatorInfo,
  type PlatformAdapters,
  PlatformError,
  SOCIAL_PLATFORMS,
  type SocialPlatform,
} from "./platform.ts";
import { readyAccount } from "./tokens.ts";

// The shape is ConnectAccountBody's; a blank value is the one rule a schema does not say.
function requireText(value: string, field: string): string {
  if (value.trim() === "") throw validationError(field, "required");
  return value.trim();
}

/** True for a platform identifier of the contract. */
export function isSocialPlatform(value: unknown): value is SocialPlatform {
  return typeof value === "string" && (SOCIAL_PLATFORMS as readonly string[]).includes(value);
}

/**
 * Connects an account (token encrypted at rest). Connecting the same platform account again is the
 * reconnection the spec asks for when permissions change: it replaces token, permissions and tier.
 */
export async function connectSocialAccount(
  ctx: Context,
  principal: Principal,
  input: ConnectAccountBody,
): Promise<{ account: SocialAccountView; created: boolean }> {
  const accountId = requireText(input.accountId, "accountId");
  const accessToken = requireText(input.accessToken, "accessToken");
  const displayName = input.displayName === undefined ? null : requireText(input.displayName, "displayName");
  const permissions = input.permissions ?? [];
  const tier = input.tier ?? (input.platform === "x" ? "free" : null);
  const refreshToken =
    input.refreshToken === undefined ? null : requireText(input.refreshToken, "refreshToken");
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw validationError("expiresAt", "an ISO 8601 time");
  return storeAccount(ctx, principal.orgId, {
    platform: input.platform,
    accountId,
    displayName,
    accessToken,
    refreshToken,
    expiresAt,
    permissions,
    tier,
  });
}

/** What connecting stores: tokens (encrypted here) with their expiry, permissions and tier. */
export type StoredAccount = {
  platform: SocialPlatform;
  accountId: string;
  displayName: string | null;
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
  permissions: string[];
  tier: string | null;
};

/**
 * Stores a connection (tokens encrypted at rest); the same platform account again is a reconnection:
 * tokens, expiry, permissions and tier are replaced and the account is `connected` again.
 */
export async function storeAccount(
  ctx: Context,
  orgId: string,
  input: StoredAccount,
): Promise<{ account: SocialAccountView; created: boolean }> {
  const { accountId, displayName, tier, permissions } = input;
  const values = {
    orgId,
    platform: input.platform,
    accountId,
    displayName,
    tokenCiphertext: encryptSecret(ctx.config.secretKey, input.accessToken),
    refreshTokenCiphertext: input.refreshToken
      ? encryptSecret(ctx.config.secretKey, input.refreshToken)
      : null,
    tokenExpiresAt: input.expiresAt,
    status: "connected" as const,
    permissions: [...new Set(permissions)],
    tier,
  };
  const [row] = await ctx.db
    .insert(socialAccounts)
    .values(values)
    .onConflictDoUpdate({
      target: [socialAccounts.orgId, socialAccounts.platform, socialAccounts.accountId],
      set: {
        displayName: values.displayName,
        tokenCiphertext: values.tokenCiphertext,
        refreshTokenCiphertext: values.refreshTokenCiphertext,
        tokenExpiresAt: values.tokenExpiresAt,
        status: "connected",
        expiryWarnedAt: null,
        permissions: values.permissions,
        tier: sql`coalesce(excluded.tier, ${socialAccounts.tier})`,
        connectedAt: sql`now()`,
      },
    })
    .returning({ ...accountView, created: sql<boolean>`(xmax = 0)` });
  const { created, ...account } = row!;
  return { account, created };
}

/** The organization's connected accounts (disconnected ones left out), newest first. */
export async function listSocialAccounts(ctx: Context, principal: Principal): Promise<SocialAccountView[]> {
  return ctx.db
    .select(accountView)
    .from(socialAccounts)
    .where(and(eq(socialAccounts.orgId, principal.orgId), ne(socialAccounts.status, "disconnected")))
    .orderBy(desc(socialAccounts.connectedAt), desc(socialAccounts.id));
}

/**
 * Disconnects an account: its tokens are erased and it is no longer listed or published to; its posts'
 * history stays (connecting the same platform account again revives it). 404 if not the organization's.
 */
export async function disconnectSocialAccount(ctx: Context, principal: Principal, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("social account");
  const done = await ctx.db
    .update(socialAccounts)
    .set({ status: "disconnected", tokenCiphertext: "", refreshTokenCiphertext: null, tokenExpiresAt: null })
    .where(
      and(
        eq(socialAccounts.id, id),
        eq(socialAccounts.orgId, principal.orgId),
        ne(socialAccounts.status, "disconnected"),
      ),
    )
    .returning({ id: socialAccounts.id });
  if (done.length === 0) throw notFound("social account");
}

/**
 * Loads accounts of the organization by id, ready to publish at `now`: tokens renewed when about to
 * expire (readyAccount). An account that cannot be used (reconnect required) comes back as its error.
 */
export async function loadAdapterAccounts(
  ctx: Context,
  orgId: string,
  ids: string[],
  adapters: PlatformAdapters,
  now: Date,
): Promise<
  { id: string; platform: SocialPlatform; ready: () => Promise<AdapterAccount & { id: string }> }[]
> {
  if (ids.length === 0) return [];
  const rows = await ctx.db
    .select({ id: socialAccounts.id, platform: socialAccounts.platform })
    .from(socialAccounts)
    .where(
      and(
        eq(socialAccounts.orgId, orgId),
        inArray(socialAccounts.id, ids),
        ne(socialAccounts.status, "disconnected"),
      ),
    );
  return rows.map((r) => ({
    id: r.id,
    platform: r.platform as SocialPlatform,
    ready: () => readyAccount(ctx, r.id, adapters, now),
  }));
}

/**
 * What a TikTok account may post now (creator_info/query): the privacy levels the user chooses from,
 * with the audit rule applied (an unaudited app offers SELF_ONLY only, decision 1013). 404 for an
 * account not of the organization; 400 for another platform or an account to reconnect; 503 when
 * TikTok cannot answer.
 */
export async function tiktokCreatorInfo(
  ctx: Context,
  principal: Principal,
  id: string,
  adapters: PlatformAdapters,
): Promise<CreatorInfo & { selectablePrivacyLevels: string[] }> {
  if (!isUuid(id)) throw notFound("social account");
  const [row] = await ctx.db
    .select({ id: socialAccounts.id, platform: socialAccounts.platform })
    .from(socialAccounts)
    .where(
      and(
        eq(socialAccounts.id, id),
        eq(socialAccounts.orgId, principal.orgId),
        ne(socialAccounts.status, "disconnected"),
      ),
    );
  if (!row) throw notFound("social account");
  const adapter = adapters.tiktok;
  if (row.platform !== "tiktok" || !adapter?.creatorInfo)
    throw validationError("accountId", "creator info is TikTok's: this is not a TikTok account");
  try {
    const info = await adapter.creatorInfo(await readyAccount(ctx, row.id, adapters, ctx.clock.now()));
    const selectable = ctx.config.social.tiktokAudited
      ? info.privacyLevelOptions
      : info.privacyLevelOptions.filter((l) => l === "SELF_ONLY");
    return { ...info, selectablePrivacyLevels: selectable };
  } catch (err) {
    const e = err instanceof PlatformError ? err : new PlatformError("transient", String(err));
    if (e.kind === "auth" || e.kind === "permission")
      throw validationError("accountId", `tiktok refused this account's token (${e.message}); reconnect it`);
    throw new AppError("SERVICE_UNAVAILABLE", `tiktok could not answer: ${e.message}`);
  }
}
