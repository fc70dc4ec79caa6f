import { newsletterSubscribers, sites } from "@site/db";
import {
  AppError,
  type Context,
  createMemoryRateLimiter,
  escapeHtml,
  isUuid,
  keysetPage,
  newestFirst,
  notFound,
  type OwnedSite,
  olderThan,
  PAGE_LIMIT,
  type RateLimiter,
} from "@site/domain/core";
import { and, eq, getTableColumns, isNull, lt, or, sql } from "drizzle-orm";
import { envelopeSender } from "./bounces.ts";
import { CsvError, parseCsv } from "./csv.ts";
import { normalizeEmail } from "./emails.ts";
import type { Mailer } from "./mailer.ts";
import { composeMail, feedbackId } from "./message.ts";
import {
  type AddSubscriberBody,
  type ImportAnswer,
  type ImportSubscribersBody,
  MAX_CSV_BYTES,
  MAX_IMPORT_ROWS,
  type SubscriberListQuery,
  type SubscriberStatus,
  type SubscriberView,
} from "./models.ts";
import { newsletterLink, readNewsletterToken } from "./tokens.ts";

/** What newsletter functions that send mail need besides the context. */
export type MailContext = Context & { mailer: Mailer };

type Row = typeof newsletterSubscribers.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A subscriber row as the API shows it. */
export function subscriberView(r: Row): SubscriberView {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    status: r.status as SubscriberStatus,
    createdAt: r.createdAt.toISOString(),
    confirmedAt: iso(r.confirmedAt),
    unsubscribedAt: iso(r.unsubscribedAt),
    bouncedAt: iso(r.bouncedAt),
    source: r.source,
    consentedAt: iso(r.consentedAt),
  };
}

/** One row of an import, before checking. */
type ImportRow = { row: number; email: unknown; name: unknown };

/**
 * Adds one subscriber, or updates the one with that address (its name). `status` pending sends the
 * double opt-in mail; an address that unsubscribed or bounced keeps that status (decision 1101).
 */
export async function addSubscriber(
  ctx: MailContext,
  site: OwnedSite,
  body: AddSubscriberBody,
): Promise<{ subscriber: SubscriberView; created: boolean }> {
  const siteId = site.id;
  const email = normalizeEmail(body.email);
  if (!email)
    throw new AppError(
      "VALIDATION_ERROR",
      `email: not an e-mail address: "${String(body.email).slice(0, 100)}"`,
      [{ field: "email", message: "not an e-mail address" }],
    );
  const status = body.confirm ? "pending" : (body.status ?? "active");
  const [row] = await upsert(ctx, siteId, [{ email, name: body.name ?? null }], status, body.source ?? "api");
  if (!row) throw new Error("upsert returned nothing");
  if (row.inserted && status === "pending") void sendConfirmation(ctx, row.sub);
  return { subscriber: subscriberView(row.sub), created: row.inserted };
}

/**
 * Imports many subscribers (JSON rows or CSV with an `email` column, optional `name`), upserting by
 * normalised address. Any malformed row answers 400 listing each one (row number and reason) and
 * nothing is stored, unless `skipInvalid`: then the good rows are stored and the bad ones listed.
 */
export async function importSubscribers(
  ctx: MailContext,
  site: OwnedSite,
  input: { json: ImportSubscribersBody } | { csv: string; status?: "active" | "pending" },
  opts: { skipInvalid?: boolean } = {},
): Promise<ImportAnswer> {
  const siteId = site.id;
  const rows: ImportRow[] =
    "json" in input
      ? input.json.subscribers.map((s, i) => ({ row: i + 1, email: s.email, name: s.name }))
      : csvRows(input.csv);
  const status = ("json" in input ? input.json.status : input.status) ?? "active";
  if (rows.length === 0)
    throw new AppError("VALIDATION_ERROR", "subscribers: the import holds no rows", [
      { field: "subscribers", message: "no rows" },
    ]);
  if (rows.length > MAX_IMPORT_ROWS)
    throw new AppError(
      "VALIDATION_ERROR",
      `subscribers: at most ${MAX_IMPORT_ROWS} rows per import, got ${rows.length}`,
      [{ field: "subscribers", message: `at most ${MAX_IMPORT_ROWS} rows` }],
    );
  const invalid: { row: number; reason: string }[] = [];
  const good = new Map<string, string | null>();
  for (const r of rows) {
    const email = normalizeEmail(r.email);
    if (!email) {
      invalid.push({ row: r.row, reason: `not an e-mail address: "${String(r.email ?? "").slice(0, 100)}"` });
      continue;
    }
    if (r.name !== undefined && r.name !== null && (typeof r.name !== "string" || r.name.length > 200)) {
      invalid.push({ row: r.row, reason: "name: text of at most 200 characters" });
      continue;
    }
    // A repeated address: the last row's name wins, as a spreadsheet would.
    good.set(email, typeof r.name === "string" && r.name.trim() ? r.name.trim() : (good.get(email) ?? null));
  }
  if (invalid.length > 0 && !opts.skipInvalid) {
    throw new AppError(
      "VALIDATION_ERROR",
      `subscribers: ${invalid.length} row(s) are not valid (first: row ${invalid[0]!.row}, ${invalid[0]!.reason}); nothing was imported (add ?skipInvalid=1 to import the others)`,
      invalid.slice(0, 1000).map((i) => ({ field: "subscribers", row: i.row, message: i.reason })),
    );
  }
  let imported = 0;
  let updated = 0;
  const entries = [...good].map(([email, name]) => ({ email, name }));
  for (let i = 0; i < entries.length; i += 1000) {
    const done = await upsert(ctx, siteId, entries.slice(i, i + 1000), status, "import");
    for (const d of done) {
      if (d.inserted) {
        imported++;
        if (status === "pending") void sendConfirmation(ctx, d.sub);
      } else updated++;
    }
  }
  return { imported, updated, invalid };
}

/** The rows of a CSV import: a header row naming `email` (and optionally `name`), then one row each. */
function csvRows(text: string): ImportRow[] {
  if (Buffer.byteLength(text) > MAX_CSV_BYTES)
    throw new AppError("VALIDATION_ERROR", `body: a CSV import is at most ${MAX_CSV_BYTES} bytes`, [
      { field: "body", message: "too large" },
    ]);
  if (text.includes("\u0000"))
    throw new AppError("VALIDATION_ERROR", "body: NUL characters are not allowed", [
      { field: "body", message: "NUL" },
    ]);
  let parsed: ReturnType<typeof parseCsv>;
  try {
    parsed = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvError)
      throw new AppError("VALIDATION_ERROR", `body: not valid CSV at line ${e.line}: ${e.reason}`, [
        { field: "body", line: e.line, message: e.reason },
      ]);
    throw e;
  }
  const [header, ...data] = parsed;
  const columns = header?.fields.map((f) => f.trim().toLowerCase()) ?? [];
  const emailAt = columns.indexOf("email");
  if (emailAt < 0)
    throw new AppError("VALIDATION_ERROR", "body: the CSV's first row must name an `email` column", [
      { field: "body", row: 1, message: "no email column" },
    ]);
  const nameAt = columns.indexOf("name");
  return data.map((r, i) => ({
    row: i + 2,
    email: r.fields[emailAt] ?? "",
    name: nameAt >= 0 ? (r.fields[nameAt] ?? null) : null,
  }));
}

/** Inserts or updates rows by (site, email); returns each row and whether it was new. */
async function upsert(
  ctx: Context,
  siteId: string,
  entries: { email: string; name: string | null }[],
  status: "active" | "pending",
  source: string,
): Promise<{ sub: Row; inserted: boolean }[]> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .insert(newsletterSubscribers)
    .values(
      entries.map((e) => ({
        siteId,
        email: e.email,
        name: e.name,
        status,
        confirmedAt: status === "active" ? now : null,
        // Consent (decision 1455): where it came from; when: now for an address the caller vouches
        // for, at confirmation for a pending one. An address already there keeps its own record.
        source,
        consentedAt: status === "active" ? now : null,
      })),
    )
    .onConflictDoUpdate({
      target: [newsletterSubscribers.siteId, newsletterSubscribers.email],
      // The name may change; the status never does here (an unsubscribe or a bounce stands).
      set: { name: sql`coalesce(excluded.name, ${newsletterSubscribers.name})`, updatedAt: sql`now()` },
    })
    .returning({ ...getTableColumns(newsletterSubscribers), inserted: sql<boolean>`(xmax = 0)` });
  return rows.map(({ inserted, ...sub }) => ({ sub, inserted: Boolean(inserted) }));
}

/** A page of a site's subscribers, newest first, optionally of one status. */
export async function listSubscribers(ctx: Context, site: OwnedSite, query: SubscriberListQuery) {
  const siteId = site.id;
  const limit = query.limit ?? PAGE_LIMIT.default;
  const t = newsletterSubscribers;
  const rows = await ctx.db
    .select({ sub: t, at: sql<string>`${t.createdAt}::text` })
    .from(t)
    .where(
      and(
        eq(t.siteId, siteId),
        query.status ? eq(t.status, query.status) : undefined,
        olderThan(t.createdAt, t.id, query.cursor),
      ),
    )
    .orderBy(...newestFirst(t.createdAt, t.id))
    .limit(limit + 1);
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.sub.id }));
  return { subscribers: page.map((r) => subscriberView(r.sub)), nextCursor };
}

/** Deletes a subscriber of the site; 404 for any other id. */
export async function deleteSubscriber(ctx: Context, site: OwnedSite, subscriberId: string): Promise<void> {
  const siteId = site.id;
  if (!isUuid(subscriberId)) throw notFound("subscriber");
  const gone = await ctx.db
    .delete(newsletterSubscribers)
    .where(and(eq(newsletterSubscribers.id, subscriberId), eq(newsletterSubscribers.siteId, siteId)))
    .returning({ id: newsletterSubscribers.id });
  if (gone.length === 0) throw notFound("subscriber");
}

/** How often a pending address gets its confirmation mail again, at most. */
export const CONFIRM_RESEND_MS = 10 * 60_000;

/** The public subscribe form's limits, in process (decision 1104). */
export type SubscribeLimits = { perSite: RateLimiter; perAddress: RateLimiter };

/** Per site 60 a minute; per address 5 an hour. */
export function createSubscribeLimits(now?: () => number): SubscribeLimits {
  return {
    perSite: createMemoryRateLimiter({ requests: 60, windowMs: 60_000, now }),
    perAddress: createMemoryRateLimiter({ requests: 5, windowMs: 3_600_000, now }),
  };
}

/**
 * The public subscribe form of a published site: the same answer whatever the address's state (no
 * enumeration: the mail, if any, goes out after the answer). A new address becomes pending with a
 * confirmation mail; a pending one gets it again (at most every 10 minutes); one that unsubscribed
 * opts in again the same way; active and bounced addresses get nothing.
 */
export async function publicSubscribe(
  ctx: MailContext,
  limits: SubscribeLimits,
  slug: string,
  rawEmail: string,
): Promise<void> {
  const [site] = await ctx.db
    .select({ id: sites.id, orgId: sites.orgId, live: sites.publicContentLive })
    .from(sites)
    .where(eq(sites.slug, slug))
    .limit(1);
  if (!site?.live) throw notFound("site");
  const email = normalizeEmail(rawEmail);
  if (!email)
    throw new AppError("VALIDATION_ERROR", "email: not an e-mail address", [
      { field: "email", message: "not an e-mail address" },
    ]);
  for (const [limiter, id, what] of [
    [limits.perSite, `site:${site.id}`, "this site's sign-up form"],
    // Per address across the whole organization: 25 sites of one owner are not 25 allowances.
    [limits.perAddress, `addr:${site.orgId}:${email}`, "this address"],
  ] as const) {
    const d = await limiter.take(id);
    if (!d.allowed)
      throw new AppError("RATE_LIMITED", `too many sign-ups for ${what}; try again later`, undefined, {
        "retry-after": String(Math.max(1, Math.ceil(d.resetMs / 1000))),
      });
  }
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(newsletterSubscribers)
    .values({ siteId: site.id, email, status: "pending", source: "form" })
    .onConflictDoUpdate({
      target: [newsletterSubscribers.siteId, newsletterSubscribers.email],
      // An unsubscribed address that signs up again is pending again (it confirms by mail).
      set: {
        status: sql`case when ${newsletterSubscribers.status} = 'unsubscribed' then 'pending' else ${newsletterSubscribers.status} end`,
        updatedAt: sql`now()`,
      },
    })
    .returning();
  if (row?.status !== "pending") return;
  if (row.confirmSentAt && now.getTime() - row.confirmSentAt.getTime() < CONFIRM_RESEND_MS) return;
  void sendConfirmation(ctx, row);
}

/**
 * Reserves the confirmation mail of a pending subscriber before it is sent: `confirm_sent_at` is set
 * in one conditional UPDATE (none yet, or the last one older than CONFIRM_RESEND_MS), so of several
 * concurrent sign-ups of one address exactly one sends. Returns the reservation's time, or undefined
 * when another request holds it.
 */
async function reserveConfirmation(ctx: Context, subscriberId: string): Promise<Date | undefined> {
  const at = ctx.clock.now();
  const before = new Date(at.getTime() - CONFIRM_RESEND_MS);
  // Concurrent UPDATEs of one row queue on its lock; each re-checks the condition on the row as the
  // one before left it (PostgreSQL's READ COMMITTED re-evaluation), so only the first matches.
  const [r] = await ctx.db
    .update(newsletterSubscribers)
    .set({ confirmSentAt: at })
    .where(
      and(
        eq(newsletterSubscribers.id, subscriberId),
        eq(newsletterSubscribers.status, "pending"),
        or(isNull(newsletterSubscribers.confirmSentAt), lt(newsletterSubscribers.confirmSentAt, before)),
      ),
    )
    .returning({ id: newsletterSubscribers.id });
  return r ? at : undefined;
}

/**
 * Sends the double opt-in mail (in the background of a request: failures are logged), once its
 * reservation is taken (reserveConfirmation); a failed send gives the reservation back.
 */
export async function sendConfirmation(ctx: MailContext, sub: Row): Promise<void> {
  const reserved = await reserveConfirmation(ctx, sub.id).catch((err) => {
    ctx.log.warn("newsletter confirmation not reserved", { subscriberId: sub.id, cause: err });
    return undefined;
  });
  if (!reserved) return;
  try {
    const [site] = await ctx.db
      .select({ name: sites.name, orgId: sites.orgId })
      .from(sites)
      .where(eq(sites.id, sub.siteId))
      .limit(1);
    const link = newsletterLink(ctx, "confirm", sub.id);
    const name = site?.name ?? "our newsletter";
    const mail = await composeMail(
      {
        id: `confirm-${sub.id}-${Date.now().toString(36)}`,
        from: { name, address: ctx.config.newsletter.mailFrom },
        to: sub.email,
        subject: `Confirm your subscription to ${name}`,
        html: `<p>Please confirm that you want to receive ${escapeHtml(name)}'s newsletter:</p><p><a href="${escapeHtml(link)}">Confirm my subscription</a></p><p>If you did not ask for this, ignore this mail: you will not hear from us again.</p>`,
        text: `Please confirm that you want to receive ${name}'s newsletter:\n\n${link}\n\nIf you did not ask for this, ignore this mail: you will not hear from us again.\n`,
        envelopeFrom: envelopeSender(ctx.config, { kind: "s", id: sub.id }),
        feedbackId: feedbackId({
          campaign: "confirm",
          siteId: sub.siteId,
          orgId: site?.orgId ?? "none",
          sender: ctx.config.newsletter.mailFrom,
        }),
      },
      { dkim: ctx.config.newsletter.dkim },
    );
    await ctx.mailer.send(mail);
  } catch (err) {
    ctx.log.warn("newsletter confirmation mail failed", { subscriberId: sub.id, cause: err });
    // Given back, so that the next sign-up may send it again.
    await ctx.db
      .update(newsletterSubscribers)
      .set({ confirmSentAt: null })
      .where(and(eq(newsletterSubscribers.id, sub.id), eq(newsletterSubscribers.confirmSentAt, reserved)))
      .catch(() => {});
  }
}

function badLink(): AppError {
  return new AppError("VALIDATION_ERROR", "token: this link is not valid or has expired", [
    { field: "token", message: "invalid or expired" },
  ]);
}

/** Confirms a pending address from its mail's link; an active one stays active. */
export async function confirmSubscription(
  ctx: Context,
  token: string,
): Promise<{ email: string; status: SubscriberStatus }> {
  const id = readNewsletterToken(ctx, "confirm", token);
  if (!id) throw badLink();
  const [row] = await ctx.db
    .update(newsletterSubscribers)
    .set({
      status: "active",
      confirmedAt: ctx.clock.now(),
      consentedAt: ctx.clock.now(),
      updatedAt: sql`now()`,
    })
    .where(and(eq(newsletterSubscribers.id, id), eq(newsletterSubscribers.status, "pending")))
    .returning();
  if (row) return { email: row.email, status: "active" };
  const [now] = await ctx.db
    .select()
    .from(newsletterSubscribers)
    .where(eq(newsletterSubscribers.id, id))
    .limit(1);
  if (!now) throw badLink();
  return { email: now.email, status: now.status as SubscriberStatus };
}

/** Unsubscribes the address a link names (idempotent; a bounced address stays bounced). */
export async function unsubscribe(ctx: Context, token: string): Promise<{ email: string }> {
  const id = readNewsletterToken(ctx, "unsubscribe", token);
  if (!id) throw badLink();
  const [row] = await ctx.db
    .update(newsletterSubscribers)
    .set({
      status: sql`case when ${newsletterSubscribers.status} = 'bounced' then 'bounced' else 'unsubscribed' end`,
      unsubscribedAt: sql`coalesce(${newsletterSubscribers.unsubscribedAt}, now())`,
      updatedAt: sql`now()`,
    })
    .where(eq(newsletterSubscribers.id, id))
    .returning({ email: newsletterSubscribers.email });
  if (!row) throw badLink();
  return { email: row.email };
}
