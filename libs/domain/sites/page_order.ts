import { type Static, Type } from "@sinclair/typebox";
import { pages, sites, type Tx } from "@site/db";
import { type Context, checkInput, notFound, type OwnedSite } from "@site/domain/core";
import { and, eq, gte, lt, ne, sql } from "drizzle-orm";
import { orderProblems, refuse } from "./_input.ts";

// Positions are unique per site (a unique index, not luck). Every write that moves pages takes the site
// row's lock first, so concurrent creates and reorders run one after another. PostgreSQL checks a
// non-deferrable unique index row by row, so moves go through a parking range far above any real position
// (written positions are capped at MAX_PAGE_POSITION): no statement ever sees two pages at one position.

/** The highest position a caller may write. */
export const MAX_PAGE_POSITION = 1_000_000;
const PARKING = 1_000_000_000;

/** The body of PUT …/pages/order. */
export const PageOrderBody = Type.Object({
  pageIds: Type.Array(Type.String(), {
    maxItems: 10_000,
    description: "every page id of the site, each once, in the new order",
  }),
});
/** The body of PUT …/pages/order. */
export type PageOrderBody = Static<typeof PageOrderBody>;

/** Serializes page moves of one site: locks its row for the rest of the transaction. */
export async function lockSitePages(tx: Tx, siteId: string): Promise<void> {
  const [site] = await tx.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).for("update");
  if (!site) throw notFound("site");
}

/** The position after the last page of a site. */
export async function nextPagePosition(tx: Tx, siteId: string): Promise<number> {
  const [row] = await tx
    .select({ next: sql<number>`coalesce(max(${pages.position}) + 1, 0)::int` })
    .from(pages)
    .where(eq(pages.siteId, siteId));
  return row?.next ?? 0;
}

/**
 * Frees `position` for a page being placed there: the pages at or after it (but `movingId`) move one
 * down. Needs lockSitePages first. The moving page is parked meanwhile so it never collides midway.
 */
export async function makeRoomAt(tx: Tx, siteId: string, position: number, movingId?: string): Promise<void> {
  const [taken] = await tx
    .select({ id: pages.id })
    .from(pages)
    .where(
      and(
        eq(pages.siteId, siteId),
        eq(pages.position, position),
        movingId ? ne(pages.id, movingId) : undefined,
      ),
    )
    .limit(1);
  if (!taken) return;
  if (movingId)
    await tx
      .update(pages)
      .set({ position: PARKING - 1 })
      .where(eq(pages.id, movingId));
  const after = and(eq(pages.siteId, siteId), gte(pages.position, position), lt(pages.position, PARKING - 1));
  await tx
    .update(pages)
    .set({ position: sql`${pages.position} + ${PARKING}` })
    .where(after);
  await tx
    .update(pages)
    .set({ position: sql`${pages.position} - ${PARKING} + 1` })
    .where(and(eq(pages.siteId, siteId), gte(pages.position, PARKING)));
}

/**
 * Puts a site's pages in the given order, as one atomic write: positions become 0..n-1. The ids must be
 * exactly the site's pages, each once; otherwise 400 VALIDATION_ERROR naming the missing, unknown and
 * repeated ids, and nothing changes.
 */
export async function reorderPages(ctx: Context, site: OwnedSite, input: PageOrderBody): Promise<void> {
  const siteId = site.id;
  const { pageIds } = checkInput(PageOrderBody, input);
  const ids = pageIds.map((id) => id.toLowerCase());
  await ctx.db.transaction(async (tx) => {
    await lockSitePages(tx, siteId);
    const rows = await tx.select({ id: pages.id }).from(pages).where(eq(pages.siteId, siteId));
    const existing = new Set(rows.map((r) => r.id));
    const problems = orderProblems("pageIds", existing, ids, { unit: "page", whole: "the site" });
    if (problems.length) throw refuse(problems);
    if (ids.length === 0) return;
    await tx
      .update(pages)
      .set({ position: sql`${pages.position} + ${PARKING}` })
      .where(eq(pages.siteId, siteId));
    // The ids were just checked to be this site's pages, so the array literal holds UUIDs only.
    await tx.execute(sql`
      update pages set position = (o.n - 1)::int
      from unnest(${`{${ids.join(",")}}`}::uuid[]) with ordinality as o(id, n)
      where pages.id = o.id and pages.site_id = ${siteId}::uuid`);
    await tx.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
  });
}
