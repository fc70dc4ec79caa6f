import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { type DbHandle, mediaUploads, organizations, sites, usageEvents } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { AppError, type Context, createOrganization } from "@site/domain/core";
import { testContext } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import {
  chargeOrgStorage,
  countLanding,
  countRecentEvents,
  lockOrg,
  lockSiteOrg,
  pendingOrgUploadBytes,
  pendingUploads,
  releaseOrgStorage,
  reserveImport,
  secondsUntilSlotFrees,
  settleImportReservation,
  storageQuotaError,
  uploadCapError,
} from "./quota.ts";

// The storage quota of an organization and the rolling daily caps of a site (uploads, failed fetches),
// with the reservations an import holds while it runs, on a real PostgreSQL and a fixed clock: the
// edges of each limit, the exact refusals users see, and which rows each step writes. Also the focused
// test StrykerJS runs for quota.ts (docs/mutation/quota.md).

const DAY = 24 * 3600_000;
const NOW = new Date("2026-11-26T12:00:00.000Z");
const at = (ms: number) => new Date(NOW.getTime() + ms);

let handle: DbHandle;
let base: Context;
beforeAll(async () => {
  handle = await createTestDatabase();
  base = testContext(handle.db, { now: () => NOW });
});
afterAll(() => handle.close());

/** The context at NOW with these daily limits. */
const ctxWith = (limits: { dailyUploads?: number; dailyFetchAttempts?: number } = {}): Context => ({
  ...base,
  config: {
    ...base.config,
    limits: { ...base.config.limits, dailyUploads: 50, dailyFetchAttempts: 50, ...limits },
  },
});

const uniq = () => randomUUID().slice(0, 8);
async function org(quota: number, used = 0): Promise<string> {
  const { id } = await createOrganization(base, { name: `Quota ${uniq()}`, storageQuotaBytes: quota });
  if (used)
    await handle.db.update(organizations).set({ storageUsedBytes: used }).where(eq(organizations.id, id));
  return id;
}
async function site(orgId: string, deletedAt: Date | null = null): Promise<string> {
  const [row] = await handle.db
    .insert(sites)
    .values({ orgId, name: "Q", slug: `q-${uniq()}`, deletedAt })
    .returning({ id: sites.id });
  return row!.id;
}
const used = async (orgId: string) =>
  (await handle.db.select().from(organizations).where(eq(organizations.id, orgId)))[0]!.storageUsedBytes;
type Kind = "upload" | "fetch_failure";
const event = (siteId: string, kind: Kind, createdAt: Date, reservedUntil: Date | null = null) =>
  handle.db.insert(usageEvents).values({ siteId, kind, createdAt, reservedUntil });
/** The site's usage events in order: [kind, createdAt, reservedUntil] (times as ISO strings). */
const events = async (siteId: string) =>
  (await handle.db.select().from(usageEvents).where(eq(usageEvents.siteId, siteId)))
    .sort((a, b) => a.id - b.id)
    .map((e) => [e.kind, e.createdAt.toISOString(), e.reservedUntil?.toISOString() ?? null]);
type Refusal = { code?: string; message?: string; headers?: Record<string, string>; unexpected?: string };
const refusal = (err: unknown): Refusal =>
  err instanceof AppError
    ? { code: err.code, message: err.message, headers: err.headers }
    : { unexpected: String(err) };
/** Runs fn in a transaction: "ok" or the refusal it threw (the transaction rolled back). */
const inTx = (fn: (tx: Parameters<Parameters<Context["db"]["transaction"]>[0]>[0]) => Promise<unknown>) =>
  handle.db.transaction(fn).then(() => "ok" as const, refusal);
/** Whether another connection can take the row's lock at once (NOWAIT), or finds it held. */
const lockable = (table: "organizations" | "sites", id: string) =>
  handle.sql
    .begin((s) => s`select id from ${s(table)} where id = ${id} for update nowait`)
    .then(
      () => "free",
      (e: { code?: string }) => (e.code === "55P03" ? "held" : `error ${e.code}`),
    );
const quotaOf = (quota: number) => ({
  code: "FORBIDDEN",
  message: `the organization's storage quota of ${quota} bytes would be exceeded`,
  headers: {},
});

describe("lockSiteOrg and lockOrg", () => {
  test("lockSiteOrg answers the counters of the site's organization", async () => {
    const o = await org(1000, 250);
    const s = await site(o);
    await org(7, 3);
    expect(await handle.db.transaction((tx) => lockSiteOrg(tx, s))).toEqual({
      orgId: o,
      quota: 1000,
      used: 250,
    });
  });

  test("lockSiteOrg: a deleted site, or none, is 404 site not found", async () => {
    const o = await org(1000);
    const gone = await site(o, at(-1000));
    const notFound = { code: "NOT_FOUND", message: "site not found", headers: {} };
    expect(await inTx((tx) => lockSiteOrg(tx, gone))).toEqual(notFound);
    expect(await inTx((tx) => lockSiteOrg(tx, randomUUID()))).toEqual(notFound);
  });

  test("lockSiteOrg holds the organization's row and the site's until the transaction ends (decision 1420)", async () => {
    const o = await org(1000);
    const s = await site(o);
    const other = await site(o);
    await handle.db.transaction(async (tx) => {
      await lockSiteOrg(tx, s);
      expect(await lockable("organizations", o)).toBe("held");
      expect(await lockable("sites", s)).toBe("held");
      expect(await lockable("sites", other)).toBe("free");
    });
    expect(await lockable("organizations", o)).toBe("free");
    expect(await lockable("sites", s)).toBe("free");
  });

  test("lockSiteOrg: a site deleted while it waited for the organization's lock is 404 (decision 1420)", async () => {
    const o = await org(1000);
    const s = await site(o);
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    // A site delete: the organization's row locked, the site marked deleted, committed later.
    const deleting = handle.db.transaction(async (tx) => {
      await lockOrg(tx, o);
      await tx.update(sites).set({ deletedAt: NOW }).where(eq(sites.id, s));
      locked();
      await released;
    });
    await isLocked;
    const waiter = inTx((tx) => lockSiteOrg(tx, s));
    while (
      (
        await handle.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`
      )[0]!.n < 1
    )
      await Bun.sleep(5);
    release();
    await deleting;
    expect(await waiter).toEqual({ code: "NOT_FOUND", message: "site not found", headers: {} });
  });

  test("lockOrg answers the organization's counters and holds its row; an unknown one is 404", async () => {
    const o = await org(900, 12);
    await handle.db.transaction(async (tx) => {
      expect(await lockOrg(tx, o)).toEqual({ orgId: o, quota: 900, used: 12 });
      expect(await lockable("organizations", o)).toBe("held");
    });
    expect(await lockable("organizations", o)).toBe("free");
    expect(await inTx((tx) => lockOrg(tx, randomUUID()))).toEqual({
      code: "NOT_FOUND",
      message: "organization not found",
      headers: {},
    });
  });
});

describe("chargeOrgStorage and releaseOrgStorage", () => {
  test("a charge may fill the quota to the byte; one byte more is 403 and the counter stays", async () => {
    const o = await org(1000, 400);
    const other = await org(1000, 400);
    expect(await inTx(async (tx) => chargeOrgStorage(tx, await lockOrg(tx, o), 600))).toBe("ok");
    expect(await used(o)).toBe(1000);
    expect(await inTx(async (tx) => chargeOrgStorage(tx, await lockOrg(tx, o), 1))).toEqual(quotaOf(1000));
    expect(await used(o)).toBe(1000);
    expect(await used(other)).toBe(400);
  });

  test("a release gives the bytes back to its own organization, never below zero", async () => {
    const o = await org(1000, 500);
    const other = await org(1000, 500);
    await handle.db.transaction((tx) => releaseOrgStorage(tx, { orgId: o }, 200));
    expect(await used(o)).toBe(300);
    await handle.db.transaction((tx) => releaseOrgStorage(tx, { orgId: o }, 1000));
    expect(await used(o)).toBe(0);
    expect(await used(other)).toBe(500);
  });
});

describe("pendingOrgUploadBytes and pendingUploads", () => {
  test("only prepared uploads that have not expired count: the site's number, the organization's bytes", async () => {
    const o = await org(10_000);
    const a = await site(o);
    const b = await site(o);
    const stranger = await site(await org(10_000));
    type Status = (typeof mediaUploads.$inferInsert)["status"];
    const upload = (siteId: string, size: number, expiresAt: Date, status: Status = "prepared") =>
      handle.db.insert(mediaUploads).values({
        siteId,
        key: `k-${uniq()}`,
        name: "a.png",
        contentType: "image/png",
        size,
        status,
        expiresAt,
      });
    await upload(a, 100, at(3600_000));
    await upload(b, 20, at(1));
    await upload(a, 1000, at(3600_000), "landed");
    await upload(a, 2000, at(3600_000), "rejected");
    await upload(a, 4000, at(3600_000), "expired");
    await upload(a, 8000, NOW); // expires at this very moment: no longer pending
    await upload(a, 8000, at(-1));
    await upload(stranger, 5000, at(3600_000));
    // A deleted site's prepared upload can never land: it no longer holds the organization's quota.
    await upload(await site(o, at(-1000)), 300, at(3600_000));
    const ctx = ctxWith();
    await handle.db.transaction(async (tx) => {
      expect(await pendingOrgUploadBytes(ctx, tx, o)).toBe(120);
      expect(await pendingUploads(ctx, tx, a, o)).toEqual({ count: 1, bytes: 120 });
      expect(await pendingUploads(ctx, tx, b, o)).toEqual({ count: 1, bytes: 120 });
      const empty = await org(10);
      const lone = await site(empty);
      expect(await pendingOrgUploadBytes(ctx, tx, empty)).toBe(0);
      expect(await pendingUploads(ctx, tx, lone, empty)).toEqual({ count: 0, bytes: 0 });
    });
  });
});

describe("countRecentEvents and secondsUntilSlotFrees", () => {
  test("the rolling day: an event exactly 24 h old has left it; a reservation counts while it is in the future", async () => {
    const s = await site(await org(1000));
    const other = await site(await org(1000));
    await event(s, "upload", at(-DAY)); // left the day
    await event(s, "upload", at(-DAY + 1)); // counted
    await event(s, "upload", at(-1000)); // counted
    await event(s, "upload", at(-1000), at(1)); // reservation in flight: counted
    await event(s, "upload", at(-1000), NOW); // lapses at this very moment
    await event(s, "upload", at(-1000), at(-1000)); // lapsed
    await event(s, "fetch_failure", at(-1000));
    await event(other, "upload", at(-1000));
    const ctx = ctxWith();
    expect(await countRecentEvents(ctx, handle.db, s, "upload")).toBe(3);
    expect(await countRecentEvents(ctx, handle.db, s, "fetch_failure")).toBe(1);
    expect(await countRecentEvents(ctx, handle.db, await site(await org(1)), "upload")).toBe(0);
  });

  test("seconds until the oldest counted event leaves the day, rounded up; a full day when none counts", async () => {
    const ctx = ctxWith();
    const s = await site(await org(1000));
    expect(await secondsUntilSlotFrees(ctx, handle.db, s, "upload")).toBe(86_400);
    // Older events that do not count: out of the day, a lapsed reservation, another kind.
    await event(s, "upload", at(-DAY));
    await event(s, "upload", at(-2 * 3600_000), at(-1));
    await event(s, "fetch_failure", at(-3 * 3600_000));
    await event(s, "upload", at(-3600_000), at(60_000));
    await event(s, "upload", at(-60_000));
    expect(await secondsUntilSlotFrees(ctx, handle.db, s, "upload")).toBe(82_800);
    expect(await secondsUntilSlotFrees(ctx, handle.db, s, "fetch_failure")).toBe(75_600);
    const edge = await site(await org(1000));
    await event(edge, "upload", at(-DAY + 1));
    expect(await secondsUntilSlotFrees(ctx, handle.db, edge, "upload")).toBe(1);
    const half = await site(await org(1000));
    await event(half, "upload", at(-DAY + 1500));
    expect(await secondsUntilSlotFrees(ctx, handle.db, half, "upload")).toBe(2);
  });
});

describe("reserveImport and settleImportReservation", () => {
  test("a reservation is one failed fetch and one upload, both created now and held for holdMs", async () => {
    const s = await site(await org(1000));
    const r = await reserveImport(ctxWith(), s, 60_000);
    const rows = await handle.db.select().from(usageEvents).where(eq(usageEvents.siteId, s));
    const byKind = rows.sort((a, b) => a.kind.localeCompare(b.kind));
    expect(byKind.map((e) => [e.id, e.kind, e.createdAt.getTime(), e.reservedUntil?.getTime()])).toEqual([
      [r.attemptId, "fetch_failure", NOW.getTime(), NOW.getTime() + 60_000],
      [r.uploadId, "upload", NOW.getTime(), NOW.getTime() + 60_000],
    ]);
  });

  test("the daily upload cap: the last slot can be reserved; then 429 with the seconds until a slot frees", async () => {
    const ctx = ctxWith({ dailyUploads: 2 });
    const s = await site(await org(1000));
    await event(s, "upload", at(-3600_000));
    await reserveImport(ctx, s, 60_000);
    const err = await reserveImport(ctx, s, 60_000).then(() => "ok", refusal);
    expect(err).toEqual({
      code: "RATE_LIMITED",
      message: "this site reached its limit of 2 uploads in the last 24 hours",
      headers: { "retry-after": "82800" },
    });
    expect(await events(s)).toHaveLength(3);
  });

  test("the daily failed-fetch limit: the last attempt can be reserved; then 429 with the seconds until one frees", async () => {
    const ctx = ctxWith({ dailyFetchAttempts: 2 });
    const s = await site(await org(1000));
    await event(s, "fetch_failure", at(-2 * 3600_000));
    const r = await reserveImport(ctx, s, 60_000);
    await settleImportReservation(ctx, r, "failed_fetch");
    const err = await reserveImport(ctx, s, 60_000).then(() => "ok", refusal);
    expect(err).toEqual({
      code: "RATE_LIMITED",
      message: "this site reached its limit of 2 failed fetches in the last 24 hours",
      headers: { "retry-after": "79200" },
    });
    expect(await events(s)).toHaveLength(2);
  });

  test("a deleted site reserves nothing: 404", async () => {
    const s = await site(await org(1000), at(-1));
    expect(await reserveImport(ctxWith(), s, 60_000).then(() => "ok", refusal)).toEqual({
      code: "NOT_FOUND",
      message: "site not found",
      headers: {},
    });
    expect(await events(s)).toEqual([]);
  });

  test("five imports reserving at once under a cap of 3: exactly 3 hold a slot", async () => {
    const ctx = ctxWith({ dailyUploads: 3 });
    const s = await site(await org(1000));
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        reserveImport(ctx, s, 60_000).then(
          () => "ok",
          (e) => refusal(e).code,
        ),
      ),
    );
    expect(results.sort()).toEqual(["RATE_LIMITED", "RATE_LIMITED", "ok", "ok", "ok"]);
    expect(await countRecentEvents(ctx, handle.db, s, "upload")).toBe(3);
  });

  test("two imports reserving the last slot at once: both wait for the organization's lock; one holds the slot, the other is 429", async () => {
    const ctx = ctxWith({ dailyUploads: 1 });
    const o = await org(1000);
    const s = await site(o);
    // Another transaction holds the organization's row, so that both reservations are surely in flight together.
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let held = () => {};
    const holding = new Promise<void>((r) => {
      held = r;
    });
    const holder = handle.sql.begin(async (q) => {
      await q`select id from organizations where id = ${o} for update`;
      held();
      await released;
    });
    await holding;
    let settled = 0;
    const both = [1, 2].map(() =>
      reserveImport(ctx, s, 60_000)
        .then(
          () => "ok",
          (e) => refusal(e).code,
        )
        .finally(() => settled++),
    );
    // Both wait for the lock (had reserveImport taken none, both would have answered already).
    const waiting = async () =>
      (
        await handle.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`
      )[0]!.n;
    while (settled < 2 && (await waiting()) < 2) await Bun.sleep(10);
    release();
    await holder;
    expect((await Promise.all(both)).sort()).toEqual(["RATE_LIMITED", "ok"]);
    expect(await countRecentEvents(ctx, handle.db, s, "upload")).toBe(1);
  });

  test("settled as a failed fetch: the attempt stays counted for good, the upload slot is given back", async () => {
    const ctx = ctxWith();
    const s = await site(await org(1000));
    await event(s, "upload", at(-1000));
    const r = await reserveImport(ctx, s, 60_000);
    await settleImportReservation(ctx, r, "failed_fetch");
    expect(await events(s)).toEqual([
      ["upload", at(-1000).toISOString(), null],
      ["fetch_failure", NOW.toISOString(), null],
    ]);
  });

  test("settled as not counted: both the attempt and the upload slot are given back", async () => {
    const ctx = ctxWith();
    const s = await site(await org(1000));
    await event(s, "fetch_failure", at(-1000));
    const r = await reserveImport(ctx, s, 60_000);
    await settleImportReservation(ctx, r, "not_counted");
    expect(await events(s)).toEqual([["fetch_failure", at(-1000).toISOString(), null]]);
  });

  test("an upload slot the landing already confirmed stays counted when the reservation is settled", async () => {
    const ctx = ctxWith();
    const s = await site(await org(1000));
    const r = await reserveImport(ctx, s, 60_000);
    await handle.db.transaction((tx) =>
      countLanding(ctx, tx, { siteId: s, size: 10, countsAsUpload: true, reservation: r }),
    );
    await settleImportReservation(ctx, r, "not_counted");
    expect(await events(s)).toEqual([["upload", NOW.toISOString(), null]]);
  });
});

describe("countLanding", () => {
  test("an import with a reservation: counts its bytes to the quota's byte, confirms its slot, drops its attempt", async () => {
    // The cap is spent by the reservation itself: a reserved slot is not checked again.
    const ctx = ctxWith({ dailyUploads: 1 });
    const o = await org(1000, 400);
    const other = await org(1000, 400);
    const s = await site(o);
    const r = await reserveImport(ctx, s, 60_000);
    expect(
      await inTx((tx) =>
        countLanding(ctx, tx, { siteId: s, size: 601, countsAsUpload: true, reservation: r }),
      ),
    ).toEqual(quotaOf(1000));
    expect(await used(o)).toBe(400);
    expect(await events(s)).toHaveLength(2);
    expect(
      await inTx((tx) =>
        countLanding(ctx, tx, { siteId: s, size: 600, countsAsUpload: true, reservation: r }),
      ),
    ).toBe("ok");
    expect(await used(o)).toBe(1000);
    expect(await used(other)).toBe(400);
    expect(await events(s)).toEqual([["upload", NOW.toISOString(), null]]);
  });

  test("an upload: the last slot of the day lands and is counted now; the next is 429 with Retry-After", async () => {
    const ctx = ctxWith({ dailyUploads: 2 });
    const o = await org(1000);
    const other = await org(1000);
    const s = await site(o);
    await event(s, "upload", at(-3600_000));
    const land = () => inTx((tx) => countLanding(ctx, tx, { siteId: s, size: 100, countsAsUpload: true }));
    expect(await land()).toBe("ok");
    expect(await used(o)).toBe(100);
    expect(await used(other)).toBe(0);
    expect(await events(s)).toEqual([
      ["upload", at(-3600_000).toISOString(), null],
      ["upload", NOW.toISOString(), null],
    ]);
    expect(await land()).toEqual({
      code: "RATE_LIMITED",
      message: "this site reached its limit of 2 uploads in the last 24 hours",
      headers: { "retry-after": "82800" },
    });
    expect(await used(o)).toBe(100);
    expect(await events(s)).toHaveLength(2);
  });

  test("a landing that is no upload is not capped and writes no event; the quota holds to the byte", async () => {
    const ctx = ctxWith({ dailyUploads: 1 });
    const o = await org(1000, 900);
    const s = await site(o);
    await event(s, "upload", at(-1000));
    const land = (size: number) =>
      inTx((tx) => countLanding(ctx, tx, { siteId: s, size, countsAsUpload: false }));
    expect(await land(101)).toEqual(quotaOf(1000));
    expect(await land(100)).toBe("ok");
    expect(await used(o)).toBe(1000);
    expect(await events(s)).toHaveLength(1);
  });

  test("an upload over the quota is 403 and counts no upload event", async () => {
    const ctx = ctxWith();
    const o = await org(1000, 1000);
    const s = await site(o);
    expect(await inTx((tx) => countLanding(ctx, tx, { siteId: s, size: 1, countsAsUpload: true }))).toEqual(
      quotaOf(1000),
    );
    expect(await events(s)).toEqual([]);
    expect(await used(o)).toBe(1000);
  });

  test("a deleted site lands nothing: 404", async () => {
    const o = await org(1000);
    const s = await site(o, at(-1));
    expect(
      await inTx((tx) => countLanding(ctxWith(), tx, { siteId: s, size: 1, countsAsUpload: false })),
    ).toEqual({ code: "NOT_FOUND", message: "site not found", headers: {} });
    expect(await used(o)).toBe(0);
  });
});

describe("the refusals", () => {
  test("uploadCapError and storageQuotaError: their codes, words and Retry-After", () => {
    expect(refusal(uploadCapError(5, 30))).toEqual({
      code: "RATE_LIMITED",
      message: "this site reached its limit of 5 uploads in the last 24 hours",
      headers: { "retry-after": "30" },
    });
    expect(refusal(storageQuotaError(1024))).toEqual(quotaOf(1024));
    expect(uploadCapError(5, 30).status).toBe(429);
    expect(storageQuotaError(1024).status).toBe(403);
  });
});
