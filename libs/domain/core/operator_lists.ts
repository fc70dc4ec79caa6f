import { apiKeys, memberships, organizations, templates, users } from "@site/db";
import { asc, eq } from "drizzle-orm";
import type { Context } from "./context.ts";
import { notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";

/** What `bun run admin org:list` shows of each organization, oldest first. */
export async function listOrganizations(ctx: Context) {
  const rows = await ctx.db
    .select({
      id: organizations.id,
      name: organizations.name,
      credits: organizations.credits,
      siteLimit: organizations.siteLimit,
      storageQuotaBytes: organizations.storageQuotaBytes,
      storageUsedBytes: organizations.storageUsedBytes,
      createdAt: organizations.createdAt,
    })
    .from(organizations)
    .orderBy(asc(organizations.createdAt), asc(organizations.id));
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}

async function requireOrg(ctx: Context, orgId: string): Promise<void> {
  if (!isUuid(orgId)) throw notFound("organization");
  const [org] = await ctx.db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  if (!org) throw notFound("organization");
}

/** The members of one organization with their roles (`user:list --org ID`), by e-mail. */
export async function listMembers(ctx: Context, orgId: string) {
  await requireOrg(ctx, orgId);
  return ctx.db
    .select({ id: users.id, email: users.email, role: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, orgId))
    .orderBy(asc(users.email));
}

/**
 * The API keys of one organization (`key:list --org ID`), oldest first. Never the secret nor its hash:
 * a key's secret is shown once, when it is made.
 */
export async function listApiKeys(ctx: Context, orgId: string) {
  await requireOrg(ctx, orgId);
  const rows = await ctx.db
    .select({
      id: apiKeys.id,
      userId: apiKeys.userId,
      email: users.email,
      scopes: apiKeys.scopes,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.orgId, orgId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map((r) => ({
    ...r,
    revoked: r.revokedAt !== null,
    createdAt: r.createdAt.toISOString(),
    revokedAt: r.revokedAt?.toISOString() ?? null,
  }));
}

/** Every gallery template, withdrawn ones included (`template:list`), by slug. */
export async function listAllTemplates(ctx: Context) {
  return ctx.db
    .select({
      slug: templates.slug,
      name: templates.name,
      description: templates.description,
      siteId: templates.siteId,
      status: templates.status,
    })
    .from(templates)
    .orderBy(asc(templates.slug));
}
