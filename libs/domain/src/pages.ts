import { and, asc, eq, sql } from "drizzle-orm";
import { isUniqueViolation, pages, sites } from "@site/db";
import type { Context } from "./context.ts";
import { AppError, notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { checkPageMedia } from "./page_media.ts";

/** A page as the API answers it. */
export type PageView = {
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
};

const PATH = /^\/(?:[a-z0-9][a-z0-9._~-]*(?:\/[a-z0-9][a-z0-9._~-]*)*)?$/;
const MAX_CONTENT = 1_000_000;

/** The editable fields of a page. */
export type PageInput = { path?: string; title?: string; content?: string; position?: number };

function checkPageInput(input: PageInput, partial: boolean): void {
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
    if (typeof input.content !== "string" || input.content.length > MAX_CONTENT) {
      throw bad("content", `MDX string of at most ${MAX_CONTENT} characters`);
    }
  }
}

async function touchSite(ctx: Context, siteId: string) {
  await ctx.db.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
}

/** The pages of a site in order. */
export async function listPages(ctx: Context, siteId: string): Promise<PageView[]> {
  return ctx.db
    .select(pageView)
    .from(pages)
    .where(eq(pages.siteId, siteId))
    .orderBy(asc(pages.position), asc(pages.path));
}

/** One page of a site; 404 NOT_FOUND otherwise. */
export async function getPage(ctx: Context, siteId: string, pageId: string): Promise<PageView> {
  if (!isUuid(pageId)) throw notFound("page");
  const [page] = await ctx.db
    .select(pageView)
    .from(pages)
    .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)));
  if (!page) throw notFound("page");
  return page;
}

function pathTaken(path: string | undefined) {
  return new AppError("VALIDATION_ERROR", `path: a page with path "${path}" already exists`, [
    { field: "path", message: "already exists" },
  ]);
}

/** Creates a page; its media references must name real library files. */
export async function createPage(ctx: Context, siteId: string, input: PageInput) {
  checkPageInput(input, false);
  const { warnings } = await checkPageMedia(ctx, siteId, input.content!);
  try {
    const [page] = await ctx.db
      .insert(pages)
      .values({
        siteId,
        path: input.path!,
        title: input.title!.trim(),
        content: input.content!,
        position: input.position ?? 0,
      })
      .returning(pageView);
    await touchSite(ctx, siteId);
    return { page: page!, warnings };
  } catch (err) {
    if (isUniqueViolation(err)) throw pathTaken(input.path);
    throw err;
  }
}

/** Updates the given fields of a page. */
export async function updatePage(ctx: Context, siteId: string, pageId: string, input: PageInput) {
  if (!isUuid(pageId)) throw notFound("page");
  checkPageInput(input, true);
  const { warnings } =
    input.content !== undefined ? await checkPageMedia(ctx, siteId, input.content) : { warnings: [] };
  try {
    const [page] = await ctx.db
      .update(pages)
      .set({
        ...(input.path !== undefined ? { path: input.path } : {}),
        ...(input.title !== undefined ? { title: input.title.trim() } : {}),
        ...(input.content !== undefined ? { content: input.content } : {}),
        ...(input.position !== undefined ? { position: input.position } : {}),
        updatedAt: sql`now()`,
      })
      .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)))
      .returning(pageView);
    if (!page) throw notFound("page");
    await touchSite(ctx, siteId);
    return { page, warnings };
  } catch (err) {
    if (isUniqueViolation(err)) throw pathTaken(input.path);
    throw err;
  }
}

/** Deletes a page. */
export async function deletePage(ctx: Context, siteId: string, pageId: string): Promise<void> {
  if (!isUuid(pageId)) throw notFound("page");
  const deleted = await ctx.db
    .delete(pages)
    .where(and(eq(pages.siteId, siteId), eq(pages.id, pageId)))
    .returning({ id: pages.id });
  if (deleted.length === 0) throw notFound("page");
  await touchSite(ctx, siteId);
}
