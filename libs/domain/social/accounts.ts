import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { socialAccounts } from "@site/db";
import {
  type Principal,
  type Context,
  validationError,
  decryptSecret,
  encryptSecret,
} from "@site/domain/core";
import type { ConnectAccountBody, SocialAccountView } from "./models.ts";
import { type AdapterAccount, SOCIAL_PLATFORMS, type SocialPlatform } from "./platform.ts";

const accountView = {
  id: socialAccounts.id,
  platform: sql<SocialPlatform>`${socialAccounts.platform}`,
  accountId: socialAccounts.accountId,
  displayName: socialAccounts.displayName,
  permissions: socialAccounts.permissions,
  tier: socialAccounts.tier,
  connectedAt: sql<string>`to_char(${socialAccounts.connectedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};

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
  const values = {
    orgId: principal.orgId,
    platform: input.platform,
    accountId,
    displayName,
    tokenCiphertext: encryptSecret(ctx.config.secretKey, accessToken),
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
        permissions: values.permissions,
        tier: values.tier,
        connectedAt: sql`now()`,
      },
    })
    .returning({ ...accountView, created: sql<boolean>`(xmax = 0)` });
  const { created, ...account } = row!;
  return { account, created };
}

/** The organization's connected accounts, newest first. */
export async function listSocialAccounts(ctx: Context, principal: Principal): Promise<SocialAccountView[]> {
  return ctx.db
    .select(accountView)
    .from(socialAccounts)
    .where(eq(socialAccounts.orgId, principal.orgId))
    .orderBy(desc(socialAccounts.connectedAt), desc(socialAccounts.id));
}

/** Loads accounts of the organization by id with their tokens decrypted (for publishing). */
export async function loadAdapterAccounts(
  ctx: Context,
  orgId: string,
  ids: string[],
): Promise<(AdapterAccount & { id: string })[]> {
  if (ids.length === 0) return [];
  const rows = await ctx.db
    .select()
    .from(socialAccounts)
    .where(and(eq(socialAccounts.orgId, orgId), inArray(socialAccounts.id, ids)));
  return rows.map((r) => ({
    id: r.id,
    platform: r.platform as SocialPlatform,
    accountId: r.accountId,
    displayName: r.displayName,
    accessToken: decryptSecret(ctx.config.secretKey, r.tokenCiphertext),
    permissions: r.permissions,
    tier: r.tier,
  }));
}
