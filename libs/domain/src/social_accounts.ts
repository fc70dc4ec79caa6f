import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { socialAccounts } from "@site/db";
import type { Principal } from "./auth.ts";
import type { Context } from "./context.ts";
import { validationError } from "./errors.ts";
import { decryptSecret, encryptSecret } from "./secrets.ts";
import { type AdapterAccount, SOCIAL_PLATFORMS, type SocialPlatform } from "./social_platform.ts";

/** A connected account as the API answers it (never its token). */
export type SocialAccountView = {
  id: string;
  platform: SocialPlatform;
  accountId: string;
  displayName: string | null;
  permissions: string[];
  tier: string | null;
  connectedAt: string;
};

/** The input of connecting an account. */
export type ConnectAccountInput = {
  platform?: unknown;
  accountId?: unknown;
  displayName?: unknown;
  accessToken?: unknown;
  permissions?: unknown;
  tier?: unknown;
};

const TIERS = ["free", "basic", "pro"] as const;

const accountView = {
  id: socialAccounts.id,
  platform: sql<SocialPlatform>`${socialAccounts.platform}`,
  accountId: socialAccounts.accountId,
  displayName: socialAccounts.displayName,
  permissions: socialAccounts.permissions,
  tier: socialAccounts.tier,
  connectedAt: sql<string>`to_char(${socialAccounts.connectedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};

function requireText(value: unknown, field: string, max: number): string {
  if (typeof value !== "string" || value.trim() === "") throw validationError(field, "required");
  if (value.length > max) throw validationError(field, `at most ${max} characters`);
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
  input: ConnectAccountInput,
): Promise<{ account: SocialAccountView; created: boolean }> {
  if (!isSocialPlatform(input.platform))
    throw validationError("platform", `must be one of ${SOCIAL_PLATFORMS.join(", ")}`);
  const accountId = requireText(input.accountId, "accountId", 200);
  const accessToken = requireText(input.accessToken, "accessToken", 8192);
  const displayName =
    input.displayName === undefined || input.displayName === null
      ? null
      : requireText(input.displayName, "displayName", 200);
  const permissions = input.permissions ?? [];
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== "string" || p.length > 200))
    throw validationError("permissions", "must be an array of strings");
  let tier: string | null = null;
  if (input.tier !== undefined && input.tier !== null) {
    if (!(TIERS as readonly unknown[]).includes(input.tier))
      throw validationError("tier", `must be one of ${TIERS.join(", ")}`);
    tier = input.tier as string;
  }
  if (input.platform === "x" && tier === null) tier = "free";
  const values = {
    orgId: principal.orgId,
    platform: input.platform,
    accountId,
    displayName,
    tokenCiphertext: encryptSecret(ctx.config.secretKey, accessToken),
    permissions: [...new Set(permissions as string[])],
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
