import { mediaUploads, organizations, provisionalWrites, sites, type Tx, usageEvents } from "@site/db";
import { AppError, type Context, notFound } from "@site/domain/core";
import { and, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";

const DAY_MS = 24 * 3600 * 1000;

/**
 * Locks the organization owning a site (serializing its quota and cap checks), then the site's row, and
 * returns the organization's counters; 404 for a site deleted meanwhile. The site is read again once the
 * organization's lock is held (decision 1420): a delete of the site that committed while this waited
 * (it holds the same lock) is seen, so its files' bytes, already given back, are not given back again and
 * nothing lands on it (CONTRACT.md "bytes freed once").
 */
export async function lockSiteOrg(tx: Tx, siteId: string) {
  const [row] = await tx
    .select({
      orgId: organizations.id,
      quota: organizations.storageQuotaBytes,
      used: organizations.storageUsedBytes,
    })
    .from(sites)
    .innerJoin(organizations, eq(organizations.id, sites.orgId))
    // A deleted site takes nothing more (decision 0730): its uploads in flight are refused.
    .where(and(eq(sites.id, siteId), isNull(sites.deletedAt)))
    .for("update", { of: organizations });
  if (!row) throw notFound("site");
  // A statement of its own, so that it sees what committed while the organization's lock was awaited
  // (READ COMMITTED re-reads only the locked row, not the joined site). NO KEY UPDATE conflicts with the
  // site delete's update, not with the key-share locks of rows that merely reference the site.
  const [site] = await tx
    .select({ id: sites.id })
    .from(sites)
    .where(and(eq(sites.id, siteId), isNull(sites.deletedAt)))
    .for("no key update");
  if (!site) throw notFound("site");
  return row;
}

/** Locks an organization (serializing its quota checks) and returns its storage counters. */
export async function lockOrg(tx: Tx, orgId: string) {
  const [row] = await tx
    .select({
      orgId: organizations.id,
      quota: organizations.storageQuotaBytes,
      used: organizations.storageUsedBytes,
    })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .for("update");
  if (!row) throw notFound("organization");
  return row;
}

/**
 * Counts `size` bytes against the organization's storage quota inside the caller's transaction (the
 * organization locked by lockOrg or lockSiteOrg): 403 FORBIDDEN when they would not fit.
 */
export async function chargeOrgStorage(
  tx: Tx,
  org: { orgId: string; quota: number; used: number },
  size: number,
): Promise<void> {
  if (org.used + size > org.quota) throw storageQuotaError(org.quota);
  await tx
    .update(organizations)
    .set({ storageUsedBytes: sql`${organizations.storageUsedBytes} + ${size}` })
    .where(eq(organizations.id, org.orgId));
}

/**
 * Gives `size` bytes back to the organization's storage quota inside the caller's transaction (the
 * organization locked by lockOrg or lockSiteOrg), never below zero: a file it counted was removed.
 */
export async function releaseOrgStorage(tx: Tx, org: { orgId: string }, size: number): Promise<void> {
  await tx
    .update(organizations)
    .set({ storageUsedBytes: sql`greatest(${organizations.storageUsedBytes} - ${size}, 0)` })
    .where(eq(organizations.id, org.orgId));
}

/** Bytes of the organization's prepared site uploads that may still land (counted at preparation). */
export async function pendingOrgUploadBytes(ctx: Context, tx: Tx, orgId: string): Promise<number> {
  const [org] = await tx
    .select({ bytes: sql<number>`coalesce(sum(${mediaUploads.size}), 0)::bigint` })
    .from(mediaUploads)
    .where(
      and(
        eq(mediaUploads.status, "prepared"),
        gt(mediaUploads.expiresAt, ctx.clock.now()),
        // A deleted site's prepared uploads can never land (lockSiteOrg refuses it): they stop counting.
        inArray(
          mediaUploads.siteId,
          tx
            .select({ id: sites.id })
            .from(sites)
            .where(and(eq(sites.orgId, orgId), isNull(sites.deletedAt))),
        ),
      ),
    );
  return Number(org?.bytes ?? 0);
}

/** The events of `kind` a site's rolling day before `now` counts, reservations in flight included. */
function countedEvents(siteId: string, kind: "upload" | "fetch_failure", now: Date) {
  return and(
    eq(usageEvents.siteId, siteId),
    eq(usageEvents.kind, kind),
    gt(usageEvents.createdAt, new Date(now.getTime() - DAY_MS)),
    // A reservation counts while its work may still be running; one a crash left behind lapses.
    or(isNull(usageEvents.reservedUntil), gt(usageEvents.reservedUntil, now)),
  );
}

/** Events of `kind` for a site in the rolling day before now, reservations in flight included. */
export async function countRecentEvents(
  ctx: Context,
  db: Tx | Context["db"],
  siteId: string,
  kind: "upload" | "fetch_failure",
): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(usageEvents)
    .where(countedEvents(siteId, kind, ctx.clock.now()));
  return row?.n ?? 0;
}

/**
 * Seconds until the oldest event of `kind` still counted for the site leaves the rolling day: when the
 * next slot frees at the latest (a reservation may free one sooner). At least 1; the Retry-After of a cap.
 */
export async function secondsUntilSlotFrees(
  ctx: Context,
  db: Tx | Context["db"],
  siteId: string,
  kind: "upload" | "fetch_failure",
): Promise<number> {
  const now = ctx.clock.now();
  const [row] = await db
    .select({ oldest: sql<string | null>`min(${usageEvents.createdAt})` })
    .from(usageEvents)
    .where(countedEvents(siteId, kind, now));
  const oldest = row?.oldest ? new Date(row.oldest).getTime() : now.getTime();
  return Math.max(1, Math.ceil((oldest + DAY_MS - now.getTime()) / 1000));
}

/** The usage events an import holds while it runs: its fetch attempt and its upload slot. */
export type ImportReservation = { attemptId: number; uploadId: number };

/**
 * Reserves, atomically (under the organization's lock, like every cap check), one fetch attempt and one
 * upload slot for an import about to reach a remote host, so that imports in flight count against the
 * daily limits (decision 0806): 429 RATE_LIMITED when either is spent. The reservation lapses after
 * `holdMs` if the process dies; confirmImport/releaseImport settle it when the import ends.
 */
export function reserveImport(ctx: Context, siteId: string, holdMs: number): Promise<ImportReservation> {
  // Provisional: a reservation lapses by itself, so it does not oblige a request cut short at shutdown
  // to finish (decision 0820).
  return provisionalWrites(() => reserveImportNow(ctx, siteId, holdMs));
}

async function reserveImportNow(ctx: Context, siteId: string, holdMs: number): Promise<ImportReservation> {
  const limits = ctx.config.limits;
  return ctx.db.transaction(async (tx) => {
    await lockSiteOrg(tx, siteId);
    if ((await countRecentEvents(ctx, tx, siteId, "upload")) >= limits.dailyUploads)
      throw uploadCapError(limits.dailyUploads, await secondsUntilSlotFrees(ctx, tx, siteId, "upload"));
    if ((await countRecentEvents(ctx, tx, siteId, "fetch_failure")) >= limits.dailyFetchAttempts)
      throw new AppError(
        "RATE_LIMITED",
        `this site reached its limit of ${limits.dailyFetchAttempts} failed fetches in the last 24 hours`,
        undefined,
        { "retry-after": String(await secondsUntilSlotFrees(ctx, tx, siteId, "fetch_failure")) },
      );
    const now = ctx.clock.now();
    const reservedUntil = new Date(now.getTime() + holdMs);
    const [attempt] = await tx
      .insert(usageEvents)
      .values({ siteId, kind: "fetch_failure", createdAt: now, reservedUntil })
      .returning({ id: usageEvents.id });
    const [upload] = await tx
      .insert(usageEvents)
      .values({ siteId, kind: "upload", createdAt: now, reservedUntil })
      .returning({ id: usageEvents.id });
    return { attemptId: attempt!.id, uploadId: upload!.id };
  });
}

/** Ends an import's reservation: its failed attempt stays counted (`failed`) or is released; its upload slot is released. */
export async function settleImportReservation(
  ctx: Context,
  r: ImportReservation,
  outcome: "failed_fetch" | "not_counted",
): Promise<void> {
  const settle = () =>
    ctx.db.transaction(async (tx) => {
      if (outcome === "failed_fetch")
        await tx.update(usageEvents).set({ reservedUntil: null }).where(eq(usageEvents.id, r.attemptId));
      else await tx.delete(usageEvents).where(eq(usageEvents.id, r.attemptId));
      await tx
        .delete(usageEvents)
        .where(and(eq(usageEvents.id, r.uploadId), sql`${usageEvents.reservedUntil} is not null`));
    });
  // Releasing what was only reserved is provisional like the reservation (it would lapse by itself): an
  // import that failed that way began no work (decisions 0820, 1410). A counted failed fetch is durable.
  await (outcome === "not_counted" ? provisionalWrites(settle) : settle());
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
  return { count: site?.n ?? 0, bytes: await pendingOrgUploadBytes(ctx, tx, orgId) };
}

/** 429 RATE_LIMITED with Retry-After: the site's rolling daily upload cap is spent. */
export function uploadCapError(limit: number, retryAfterSeconds: number): AppError {
  return new AppError(
    "RATE_LIMITED",
    `this site reached its limit of ${limit} uploads in the last 24 hours`,
    undefined,
    { "retry-after": String(retryAfterSeconds) },
  );
}

/** 403 FORBIDDEN: the organization's storage quota would be exceeded. */
export function storageQuotaError(quota: number): AppError {
  return new AppError("FORBIDDEN", `the organization's storage quota of ${quota} bytes would be exceeded`);
}

/**
 * Counts `size` bytes (and, for uploads and imports, one upload event) inside the caller's transaction.
 * An import that reserved its upload slot (`reservation`) confirms it instead, and releases its fetch
 * attempt (a fetch that delivered is not a failed one) in the same transaction as its row.
 */
export async function countLanding(
  ctx: Context,
  tx: Tx,
  input: { siteId: string; size: number; countsAsUpload: boolean; reservation?: ImportReservation },
): Promise<void> {
  const org = await lockSiteOrg(tx, input.siteId);
  if (input.reservation) {
    if (org.used + input.size > org.quota) throw storageQuotaError(org.quota);
    await tx
      .update(organizations)
      .set({ storageUsedBytes: sql`${organizations.storageUsedBytes} + ${input.size}` })
      .where(eq(organizations.id, org.orgId));
    await tx
      .update(usageEvents)
      .set({ reservedUntil: null })
      .where(eq(usageEvents.id, input.reservation.uploadId));
    await tx.delete(usageEvents).where(eq(usageEvents.id, input.reservation.attemptId));
    return;
  }
  if (input.countsAsUpload) {
    const landed = await countRecentEvents(ctx, tx, input.siteId, "upload");
    if (landed >= ctx.config.limits.dailyUploads)
      throw uploadCapError(
        ctx.config.limits.dailyUploads,
        await secondsUntilSlotFrees(ctx, tx, input.siteId, "upload"),
      );
  }
  if (org.used + input.size > org.quota) throw storageQuotaError(org.quota);
  await tx
    .update(organizations)
    .set({ storageUsedBytes: sql`${organizations.storageUsedBytes} + ${input.size}` })
    .where(eq(organizations.id, org.orgId));
  if (input.countsAsUpload)
    await tx.insert(usageEvents).values({ siteId: input.siteId, kind: "upload", createdAt: ctx.clock.now() });
}
