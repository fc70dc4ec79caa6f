import { randomUUID } from "node:crypto";
import { isUniqueViolation, pages, sites, type Tx } from "@site/db";
import { AppError, type Context, isUuid, notFound, type OwnedSite } from "@site/domain/core";
import { and, asc, eq, sql } from "drizzle-orm";
import { loadPageIndex, type PageIndex, pageIndexOf } from "./links.ts";
import type { CreatePageBody, PageView, UpdatePageBody } from "./models.ts";
import { MAX_PAGE_BYTES } from "./models.ts";
import { linkSpansOf, readPageLinks, storePageLinks } from "./page_links.ts";
import { checkPageMedia, scanPageForWrite } from "./page_media.ts";
import { lockSitePages, MAX_PAGE_POSITION, makeRoomAt, nextPagePosition } from "./page_order.ts";
import { signPageMedia } from "./page_signing.ts";

/** A page as stored. */
type PageRow = {
  id: string;
  path: string;
  title: string;
  content: string;
  position: number;
  updatedAt: string;
};

const pageView = {
  id: pages.id,
  path: pages.path,
  title: pages.title,
  content: pages.content,
  position: pages.position,
  updatedAt: sql<string>`to_char(${pages.updatedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
  links: pages.links,
};
type StoredRow = PageRow & { links: unknown };

/** A stored page with its page references translated to the pages' current paths (decision 0603). */
function translated(row: StoredRow, index: PageIndex): PageRow {
  const { links, ...page } = row;
  return { ...page, content: readPageLinks(row.content, linkSpansOf(links, row.content), index) };
}

/**
 * Page content in its stored form: links to the site's pages as references, found in the write's scan
 * (parsed off the event loop, cached by content). `self` is the page being written, with its path after
 * the write, so a link to itself resolves too.
 */
async function storedContent(
  ctx: Context,
  tx: Tx,
  input: { siteId: string; content: string; self: { id: string; path: string } },
) {
  const scan = await scanPageForWrite(ctx, input.siteId, input.content);
  const index = await loadPageIndex(tx, input.siteId);
  for (const [path, id] of index.idOf) if (id === input.self.id) index.idOf.delete(path);
  index.idOf.set(input.self.path, input.self.id);
  return storePageLinks(input.content, scan.links, index);
}

const PATH = /^\/(?:[a-z0-9][a-z0-9._~-]*(?:\/[a-z0-9][a-z0-9._~-]*)*)?$/;

// The shapes are CreatePageBody/UpdatePageBody; these are the rules a schema does not say.
function checkPageInput(input: UpdatePageBody, partial: boolean): void {
  const bad = (field: string, message: string) =>
    new AppError("VALIDATION_ERROR", `${field}: ${message}`, [{ field, message }]);
  if (!partial || input.path !== undefined) {
    if (typeof input.path !== "string" || input.path.length > 200 || !PATH.test(input.path)) {
      throw bad("path", "must be / or /segment[/segment…] of lowercase letters, digits and . _ ~ -");
    }
  }
  if (!partial || input.title !== undefined) {
    if (typeof input.title !== "string" || input.title.trim() === "" || input.title.length > 200) {
      throw bad("title", "required, at most 200 characters");
    }
  }
  if (!partial || input.content !== undefined) {
    if (typeof input.content !== "string") throw bad("content", "an MDX string");
    const bytes = Buffer.byteLength(input.content, "utf8");
    if (bytes > MAX_PAGE_BYTES)
      throw bad("content", `at most ${MAX_PAGE_BYTES} bytes (512 KiB) of MDX; this one has ${bytes}`);
  }
  if (input.position !== undefined) {
    if (!Number.isSafeInteger(input.position) || input.position < 0 || input.position > MAX_PAGE_POSITION) {
      throw bad("position", `an integer from 0 to ${MAX_PAGE_POSITION}`);
    }
  }
}

async function touchSite(ctx: Context, siteId: string) {
  await ctx.db.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
}

/** Adds what members see: the content with the site's media signed with member grants (issue 17, 11). */
async function forMembers(ctx: Context, siteId: string, rows: PageRow[]): Promise<PageView[]> {
  if (rows.length === 0) return [];
  return Promise.all(
    rows.map(async (row) => {
      const signed = await signPageMedia(ctx, {
        siteId,
        pageId: row.id,
        content: row.content,
        grant: "member",
      });
      return {
        ...row,
        displayContent: signed.content,
        unsignedMedia: signed.unsigned,
        displayNotes: signed.notes,
      };
    }),
  );
}

/** The pages of a site in order, links translated and media signed for members. */
export async function listPages(ctx: Context, site: OwnedSite): Promise<PageView[]> {
  const siteId = site.id;
  const rows = await ctx.db
    .select(pageView)
    .from(pages)
    .where(eq(pages.siteId, siteId))
    .orderBy(asc(pages.position), asc(pages.path));
  const index = pageIndexOf(rows);
  return forMembers(
    ctx,
    siteId,
    rows.map((r) => translated(r, index)),
  );
}

/** One page of a site, media signed for members; 404 NOT_FOUND otherwise. */
export async function getPage(ctx: Context, site: OwnedSite, pageId: string): Promise<PageView> {
  const siteId = site.id;
  if (!isUuid(pageId)) throw notFound("page");
  const [page] = await ctx.db
    .select(pageView)
    .from(pages)
    .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)));
  if (!page) throw notFound("page");
  return (await forMembers(ctx, siteId, [translated(page, await loadPageIndex(ctx.db, siteId))]))[0]!;
}

function pathTaken(path: string | undefined) {
  return new AppError("VALIDATION_ERROR", `path: a page with path "${path}" already exists`, [
    { field: "path", message: "already exists" },
  ]);
}

/** Creates a page; its media references must name real library files. */
export async function createPage(ctx: Context, site: OwnedSite, input: CreatePageBody) {
  const siteId = site.id;
  checkPageInput(input, false);
  const { warnings } = await checkPageMedia(ctx, siteId, input.content);
  try {
    const page = await ctx.db.transaction(async (tx) => {
      // Positions are unique per site: place the page after the last one, or make room where asked.
      await lockSitePages(tx, siteId);
      const position = input.position ?? (await nextPagePosition(tx, siteId));
      if (input.position !== undefined) await makeRoomAt(tx, siteId, position);
      const id = randomUUID();
      const stored = await storedContent(ctx, tx, {
        siteId,
        content: input.content!,
        self: { id, path: input.path! },
      });
      const [row] = await tx
        .insert(pages)
        .values({ id, siteId, path: input.path!, title: input.title!.trim(), position, ...stored })
        .returning(pageView);
      await tx.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
      return translated(row!, await loadPageIndex(tx, siteId));
    });
    return { page: (await forMembers(ctx, siteId, [page]))[0]!, warnings };
  } catch (err) {
    if (isUniqueViolation(err, "pages_site_path_unique")) throw pathTaken(input.path);
    throw err;
  }
}

/** Updates the given fields of a page. */
export async function updatePage(ctx: Context, site: OwnedSite, pageId: string, input: UpdatePageBody) {
  const siteId = site.id;
  if (!isUuid(pageId)) throw notFound("page");
  checkPageInput(input, true);
  const { warnings } =
    input.content !== undefined ? await checkPageMedia(ctx, siteId, input.content) : { warnings: [] };
  try {
    const page = await ctx.db.transaction(async (tx) => {
      if (input.position !== undefined) await lockSitePages(tx, siteId);
      const [own] = await tx
        .select({ path: pages.path })
        .from(pages)
        .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)));
      if (!own) throw notFound("page");
      if (input.position !== undefined) await makeRoomAt(tx, siteId, input.position, pageId);
      const stored =
        input.content !== undefined
          ? await storedContent(ctx, tx, {
              siteId,
              content: input.content,
              self: { id: pageId, path: input.path ?? own.path },
            })
          : {};
      const [row] = await tx
        .update(pages)
        .set({
          ...(input.path !== undefined ? { path: input.path } : {}),
          ...(input.title !== undefined ? { title: input.title.trim() } : {}),
          ...stored,
          ...(input.position !== undefined ? { position: input.position } : {}),
          updatedAt: sql`now()`,
        })
        .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)))
        .returning(pageView);
      if (!row) throw notFound("page");
      await tx.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
      return translated(row, await loadPageIndex(tx, siteId));
    });
    return { page: (await forMembers(ctx, siteId, [page]))[0]!, warnings };
  } catch (err) {
    if (isUniqueViolation(err, "pages_site_path_unique")) throw pathTaken(input.path);
    throw err;
  }
}

/** Deletes a page. */
export async function deletePage(ctx: Context, site: OwnedSite, pageId: string): Promise<void> {
  const siteId = site.id;
  if (!isUuid(pageId)) throw notFound("page");
  const deleted = await ctx.db
    .delete(pages)
    .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)))
    .returning({ id: pages.id });
  if (deleted.length === 0) throw notFound("page");
  await touchSite(ctx, siteId);
}

/** The limits of a page's fields, for schemas that state them (OpenAPI, MCP tool inputs). */
export const PAGE_LIMITS = {
  pathPattern: PATH.source,
  pathMaxLength: 200,
  titleMaxLength: 200,
  /** In UTF-8 bytes (MAX_PAGE_BYTES); as a JSON Schema maxLength (characters) it is an upper bound. */
  contentMaxLength: MAX_PAGE_BYTES,
} as const;
