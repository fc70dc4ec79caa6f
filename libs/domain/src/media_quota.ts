import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { mediaUploads, organizations, sites, type Tx, usageEvents } from "@site/db";
import type { Context } from "./context.ts";
import { AppError, notFound } from "./errors.ts";

const DAY_MS = 24 * 3600 * 1000;

/** Locks the organization owning a site (serializing its quota and cap checks) and returns its counters. */
export async function lockSiteOrg(tx: Tx, siteId: string) {
  const [row] = await tx
    .select({
      orgId: organizations.id,
      quota: organizations.storageQuotaBytes,
      used: organizations.storageUsedBytes,
    })
    .from(sites)
    .innerJoin(organizations, eq(organizations.id, sites.orgId))
    .where(eq(sites.id, siteId))
    .for("update", { of: organizations });
  if (!row) throw notFound("site");
  return row;
}

/** Events of `kind` for a site in the rolling day before now. */
export async function countRecentEvents(
  ctx: Context,
  db: Tx | Context["db"],
  siteId: string,
  kind: "upload" | "fetch_failure",
): Promise<number> {
  const since = new Date(ctx.clock.now().getTime() - DAY_MS);
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(usageEvents)
    .where(and(eq(usageEvents.siteId, siteId), eq(usageEvents.kind, kind), gt(usageEvents.createdAt, since)));
  return row?.n ?? 0;
}

/** Prepared uploads that may still land: of one site (count) and of its organization (bytes). */
export async function pendingUploads(ctx: Context, tx: Tx, siteId: string, orgId: string) {
  const now = ctx.clock.now();
  const [site] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(mediaUploads)
    .where(
      and(
        eq(mediaUploads.siteId, siteId),
        eq(mediaUploads.status, "prepared"),
        gt(mediaUploads.expiresAt, now),
      ),
    );
  const [org] = await tx
    .select({ bytes: sql<number>`coalesce(sum(${mediaUploads.size}), 0)::bigint` })
    .from(mediaUploads)
    .where(
      and(
        eq(mediaUploads.status, "prepared"),
        gt(mediaUploads.expiresAt, now),
        inArray(mediaUploads.siteId, tx.select({ id: sites.id }).from(sites).where(eq(sites.orgId, orgId))),
      ),
    );
  return { count: site?.n ?? 0, bytes: Number(org?.bytes ?? 0) };
}

/** 429 RATE_LIMITED: the site's rolling daily upload cap is spent. */
export function uploadCapError(limit: number): AppError {
  return new AppError("RATE_LIMITED", `this site reached its limit of ${limit} uploads in the last 24 hours`);
}

/** 403 FORBIDDEN: the organization's storage quota would be exceeded. */
export function storageQuotaError(quota: number): AppError {
  return new AppError("FORBIDDEN", `the organization's storage quota of ${quota} bytes would be exceeded`);
}

/** Counts `size` bytes (and, for uploads and imports, one upload event) inside the caller's transaction. */
export async function countLanding(
  ctx: Context,
  tx: Tx,
  input: { siteId: string; size: number; countsAsUpload: boolean },
): Promise<void> {
  const org = await lockSiteOrg(tx, input.siteId);
  if (input.countsAsUpload) {
    const landed = await countRecentEvents(ctx, tx, input.siteId, "upload");
    if (landed >= ctx.config.limits.dailyUploads) throw uploadCapError(ctx.config.limits.dailyUploads);
  }
  if (org.used + input.size > org.quota) throw storageQuotaError(org.quota);
  await tx
    .update(organizations)
    .set({ storageUsedBytes: sql`${organizations.storageUsedBytes} + ${input.size}` })
    .where(eq(organizations.id, org.orgId));
  if (input.countsAsUpload)
    await tx.insert(usageEvents).values({ siteId: input.siteId, kind: "upload", createdAt: ctx.clock.now() });
}
