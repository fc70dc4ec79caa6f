import { apiKeys, creditLedger, memberships, organizations, userSessions, users } from "@site/db";
import { and, eq, gt, sql } from "drizzle-orm";
import type { Context } from "./context.ts";
import { AppError, notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { SCOPES, type Scope } from "./principal.ts";
import { hashSecret, prefixedId, randomToken } from "./secrets.ts";

/** The roles of a membership; owner and admin may manage sites. */
export const ROLES = ["owner", "admin", "editor", "viewer"] as const;
/** A membership role. */
export type Role = (typeof ROLES)[number];

/** Creates an organization with its credits, site limit and storage quota. */
export async function createOrganization(
  ctx: Context,
  input: { name: string; credits?: number; siteLimit?: number; storageQuotaBytes?: number },
) {
  if (!input.name?.trim()) throw new AppError("VALIDATION_ERROR", "name: required");
  for (const [k, v] of Object.entries({
    credits: input.credits,
    siteLimit: input.siteLimit,
    storageQuotaBytes: input.storageQuotaBytes,
  })) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0))
      throw new AppError("VALIDATION_ERROR", `${k}: must be a non-negative integer`);
  }
  return ctx.db.transaction(async (tx) => {
    const [org] = await tx
      .insert(organizations)
      .values({
        name: input.name.trim(),
        credits: input.credits ?? 0,
        siteLimit: input.siteLimit ?? ctx.config.limits.orgSiteLimit,
        storageQuotaBytes: input.storageQuotaBytes ?? ctx.config.limits.orgStorageQuotaBytes,
      })
      .returning({ id: organizations.id, name: organizations.name, credits: organizations.credits });
    if (input.credits)
      await tx.insert(creditLedger).values({ orgId: org!.id, delta: input.credits, reason: "grant" });
    return org!;
  });
}

async function requireOrg(ctx: Context, orgId: string) {
  if (!isUuid(orgId)) throw notFound("organization");
  const [org] = await ctx.db.select().from(organizations).where(eq(organizations.id, orgId));
  if (!org) throw notFound("organization");
  return org;
}

/** Reads an organization's credits, adding `add` first when given (operator grant). */
export async function grantCredits(ctx: Context, orgId: string, add = 0) {
  await requireOrg(ctx, orgId);
  if (!Number.isSafeInteger(add)) throw new AppError("VALIDATION_ERROR", "add: must be an integer");
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(organizations)
      .set({ credits: sql`${organizations.credits} + ${add}` })
      .where(eq(organizations.id, orgId))
      .returning({ id: organizations.id, credits: organizations.credits });
    if (add !== 0) await tx.insert(creditLedger).values({ orgId, delta: add, reason: "grant" });
    return row!;
  });
}

/** Creates a user (or finds one by e-mail) and makes them a member of the organization with a role. */
export async function createMember(ctx: Context, input: { orgId: string; email: string; role?: Role }) {
  await requireOrg(ctx, input.orgId);
  const email = input.email?.trim().toLowerCase();
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw new AppError("VALIDATION_ERROR", "email: invalid");
  const role = input.role ?? "editor";
  if (!ROLES.includes(role)) throw new AppError("VALIDATION_ERROR", `role: one of ${ROLES.join(", ")}`);
  return ctx.db.transaction(async (tx) => {
    await tx.insert(users).values({ email }).onConflictDoNothing();
    const [user] = await tx
      .select({ id: users.id, email: users.email })
      .from(users)
      .where(eq(users.email, email));
    await tx
      .insert(memberships)
      .values({ orgId: input.orgId, userId: user!.id, role })
      .onConflictDoUpdate({ target: [memberships.orgId, memberships.userId], set: { role } });
    // A role bounds what the member's keys may do: the memberships trigger (migration 0004) drops this
    // member's cached keys in every process when the role changes.
    return { id: user!.id, email: user!.email, role };
  });
}

/** Issues an API key for a member; the secret is returned once and stored hashed. */
export async function createApiKey(ctx: Context, input: { orgId: string; userId: string; scopes: string[] }) {
  await requireOrg(ctx, input.orgId);
  const unknown = input.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || input.scopes.length === 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      `scopes: each one of ${SCOPES.join(", ")}; unknown: ${unknown.join(", ") || "none given"}`,
    );
  }
  if (!isUuid(input.userId)) throw notFound("user");
  const [member] = await ctx.db
    .select()
    .from(memberships)
    .where(and(eq(memberships.orgId, input.orgId), eq(memberships.userId, input.userId)));
  if (!member) throw notFound("member of this organization");
  const id = prefixedId("key");
  const secret = `sk_${randomToken(32)}`;
  await ctx.db.insert(apiKeys).values({
    id,
    orgId: input.orgId,
    userId: input.userId,
    secretHash: hashSecret(secret),
    scopes: [...new Set(input.scopes)] as Scope[],
  });
  return { id, key: secret };
}

/**
 * Revokes an API key at once, in every process: a trigger on api_keys notifies KEY_REVOKED_CHANNEL, which
 * PostgreSQL delivers to every process's key cache at commit. A process that caches returns once it heard
 * its own notice (so the others, served by the same commit, have it too); see decision 0802.
 */
export async function revokeApiKey(ctx: Context, keyId: string) {
  const rows = await ctx.db.transaction(async (tx) => {
    const updated = await tx
      .update(apiKeys)
      .set({ revokedAt: ctx.clock.now() })
      .where(eq(apiKeys.id, keyId))
      .returning({ id: apiKeys.id });
    return updated; // the api_keys trigger (migration 0004) notifies KEY_REVOKED_CHANNEL
  });
  if (rows.length === 0) throw notFound("API key");
  if (ctx.keys?.live && (await ctx.keys.heard(keyId, 2000))) await Bun.sleep(25);
  return { id: keyId, revoked: true as const };
}

/** The name of the dashboard session cookie. */
export const SESSION_COOKIE = "site_session";

/** Opens a dashboard session for a user; the cookie's secret is stored hashed. */
export async function createUserSession(ctx: Context, userId: string, ttlSeconds = 7 * 24 * 3600) {
  if (!isUuid(userId)) throw notFound("user");
  const [user] = await ctx.db.select({ id: users.id }).from(users).where(eq(users.id, userId));
  if (!user) throw notFound("user");
  const secret = randomToken(32);
  await ctx.db.insert(userSessions).values({
    id: prefixedId("ses"),
    userId,
    secretHash: hashSecret(secret),
    expiresAt: new Date(ctx.clock.now().getTime() + ttlSeconds * 1000),
  });
  return { cookie: `${SESSION_COOKIE}=${secret}` };
}

/** The user of a live session cookie value, or null. */
export async function sessionUser(ctx: Context, secret: string): Promise<string | null> {
  const [row] = await ctx.db
    .select({ userId: userSessions.userId })
    .from(userSessions)
    .where(and(eq(userSessions.secretHash, hashSecret(secret)), gt(userSessions.expiresAt, ctx.clock.now())));
  return row?.userId ?? null;
}
