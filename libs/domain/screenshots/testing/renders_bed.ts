import { afterAll, beforeAll } from "bun:test";
import { randomUUID } from "node:crypto";
import { createLogger, loadConfig } from "@site/config";
import { type DbHandle, screenshotRenders, sites, webhookEndpoints, webhookEvents } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { AppError, createOrganization, type Principal } from "@site/domain/core";
import { creditsOf, ledgerOf } from "@site/domain/testing";
import { createMemoryQueue, type JobQueue } from "@site/queue";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { queueScreenshot, type RenderContext } from "../renders.ts";

/**
 * The test bed of the render tests at the domain level (renders_*_test.ts): a real PostgreSQL and the
 * real in-process queue, no browser. `useRendersDb()` opens the database for the calling test file.
 */
/** The test database of the current file (set by useRendersDb). */
export let handle: DbHandle;
/** A silent log. */
export const log = createLogger("silent" as never);
const queues: JobQueue[] = [];

/** A render context on the test database: its own in-process queue, the given cap and clock. */
export function renderCtx(
  o: {
    queue?: JobQueue;
    cap?: number;
    chromium?: string;
    now?: () => Date;
    env?: Record<string, string>;
  } = {},
): RenderContext {
  const queue = o.queue ?? createMemoryQueue({ log });
  queues.push(queue);
  return {
    config: loadConfig({
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      // Only looked up (it exists), never started.
      CHROMIUM_PATH: o.chromium ?? process.execPath,
      RENDER_ORG_CONCURRENCY: String(o.cap ?? 2),
      RETRY_AFTER_SECONDS: "7",
      ...o.env,
    }),
    db: handle.db,
    clock: { now: o.now ?? (() => new Date()) },
    log,
    queue,
  };
}

/** Opens a test database for the calling test file, and closes it and every queue made after it. */
export function useRendersDb(): void {
  beforeAll(async () => {
    handle = await createTestDatabase();
  });
  afterAll(async () => {
    for (const q of queues.splice(0)) await q.close();
    await handle.close();
  });
}

export type Org = { orgId: string; siteId: string; principal: Principal };

export async function org(ctx: RenderContext, credits = 1000): Promise<Org> {
  const o = await createOrganization(ctx, { name: `Renders ${randomUUID().slice(0, 6)}`, credits });
  const [site] = await handle.db
    .insert(sites)
    .values({ orgId: o.id, name: "Shop", slug: `r-${randomUUID().slice(0, 12)}` })
    .returning({ id: sites.id });
  const principal: Principal = {
    keyId: randomUUID(),
    orgId: o.id,
    userId: randomUUID(),
    scopes: ["content:read", "content:write"],
    role: "owner",
  };
  return { orgId: o.id, siteId: site.id, principal };
}

/** The organization's credits. */
export const balance = (orgId: string) => creditsOf(handle.db, orgId);
/** The organization's ledger besides its opening grant. */
export const ledger = (orgId: string) => ledgerOf(handle.db, orgId);
/** A render's row. */
export const row = async (id: string) =>
  (await handle.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, id)))[0]!;
/** The organization's renders oldest first. */
export const byAge = async (orgId: string) =>
  handle.db
    .select()
    .from(screenshotRenders)
    .where(eq(screenshotRenders.orgId, orgId))
    .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id));
/** Ids of the organization's renders in progress (pending and admitted), sorted. */
export const inProgress = async (orgId: string) =>
  (
    await handle.db
      .select({ id: screenshotRenders.id })
      .from(screenshotRenders)
      .where(
        and(
          eq(screenshotRenders.orgId, orgId),
          eq(screenshotRenders.status, "pending"),
          isNotNull(screenshotRenders.dispatchedAt),
        ),
      )
  )
    .map((r) => r.id)
    .sort();
/** An AppError as a plain object (anything else: unexpected). */
export const appError = (err: unknown) =>
  err instanceof AppError
    ? { code: err.code, message: err.message, details: err.details, headers: err.headers }
    : { unexpected: String(err) };

/** Polls `what` for up to about 5 s (a wait seen, a job settled). */
export const until = async (what: () => Promise<boolean>) => {
  for (let i = 0; i < 500 && !(await what()); i++) await new Promise((r) => setTimeout(r, 10));
};

/** Queues a still through queueScreenshot and answers its render id. */
export async function shoot(
  ctx: RenderContext,
  o: Org,
  url = `https://example.com/${randomUUID().slice(0, 8)}`,
) {
  const answer = await queueScreenshot(ctx, o.principal, o.siteId, { url });
  if (answer.estimate) throw new Error("an estimate");
  return answer.renderId;
}

/** Writes a render straight into the table as the given organization's, pending and waiting. */
export async function waiting(o: Org, n: number, kind: "still" | "clip" = "still"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const [r] = await handle.db
      .insert(screenshotRenders)
      .values({
        orgId: o.orgId,
        siteId: kind === "still" ? o.siteId : null,
        kind,
        sourceUrl: `https://example.com/w${i}`,
        options: { clip: { durationS: 4, fps: 30, width: 1080, height: 1920 } },
        credits: 10,
        status: "pending",
      })
      .returning({ id: screenshotRenders.id });
    ids.push(r.id);
  }
  return ids;
}

/** Subscribes the organization to the render events, so that ends are recorded (decision 0840). */
export async function subscribe(orgId: string) {
  await handle.db.insert(webhookEndpoints).values({
    orgId,
    url: "https://hooks.example.com/in",
    events: ["screenshot.completed", "screenshot.failed", "clip.completed", "clip.failed"],
    secret: "whsec_test",
  });
}
/** The types of the organization's recorded webhook events. */
export const eventsOf = async (orgId: string) =>
  (await handle.db.select().from(webhookEvents).where(eq(webhookEvents.orgId, orgId))).map((e) => e.type);
