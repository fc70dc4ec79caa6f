import { type Static, Type } from "@sinclair/typebox";
import { collectionItems, collections, pages, siteLayouts } from "@site/db";
import { type Context, checkInput, named, type OwnedSite } from "@site/domain/core";
import { eq, inArray } from "drizzle-orm";
import { type Problem, refuse } from "./_input.ts";
import type { CollectionField } from "./collection_model.ts";
import { isBrokenHref, loadPageIndex, MAX_HREF, pageIndexOf, parseHref } from "./links.ts";
import { brokenPageLinks, linkSpansOf } from "./page_links.ts";
import { mediaSigner, storableMediaRefs } from "./site_media.ts";
import { readStoredLayout } from "./stored_layout.ts";

/** The most hrefs one translate call may carry. */
export const MAX_TRANSLATE = 1000;

/** The body of POST …/links/translate. */
export const TranslateLinksBody = Type.Object({
  hrefs: Type.Array(Type.String({ maxLength: MAX_HREF }), {
    minItems: 1,
    maxItems: MAX_TRANSLATE,
    description: "site paths (/about#team), page references (page:<id>), media paths, URLs or #anchors",
  }),
});
/** The body of POST …/links/translate. */
export type TranslateLinksBody = Static<typeof TranslateLinksBody>;

/** What one href names now. */
export const TranslatedLink = Type.Object({
  href: Type.String({ description: "as given" }),
  kind: Type.Union(
    [
      Type.Literal("page"),
      Type.Literal("media"),
      Type.Literal("external"),
      Type.Literal("anchor"),
      Type.Literal("broken"),
    ],
    { description: "broken: a reference to a deleted page, a path naming no page, or an unknown media file" },
  ),
  pageId: Type.Optional(Type.String({ description: "the page's id (page, or broken reference)" })),
  path: Type.Optional(Type.String({ description: "the page's current path with the href's #anchor/?query" })),
  url: Type.Optional(
    Type.String({ description: "external: the URL; media: a URL signed with a member grant" }),
  ),
});
/** What one href names now. */
export type TranslatedLink = Static<typeof TranslatedLink>;

/** What each href names now, in the order given (POST …/links/translate, translate_links). */
export const TranslatedLinks = named("TranslatedLinks", Type.Object({ links: Type.Array(TranslatedLink) }));

/** A link of the site that names no page now, and where it is. */
export const BrokenLink = Type.Object({
  href: Type.String({ description: "as stored: page:<id> of a deleted page, or a path naming no page" }),
  where: Type.Object({
    type: Type.Union([Type.Literal("page"), Type.Literal("layout"), Type.Literal("collection")]),
    id: Type.String({ description: "the page id, the site id (layout) or the collection item id" }),
    field: Type.Optional(Type.String({ description: "layout: the href's place; collection: the field key" })),
    collection: Type.Optional(Type.String({ description: "the collection key" })),
  }),
});
/** A link of the site that names no page now. */
export type BrokenLink = Static<typeof BrokenLink>;

/** A site's broken links (GET …/links/broken, list_broken_links). */
export const BrokenLinkList = named("BrokenLinkList", Type.Object({ links: Type.Array(BrokenLink) }));

/**
 * Says what each href names in a site now: a page (its id and current path), a media file of the site
 * (signed for a member), an external URL, an in-page anchor, or nothing (broken). Hrefs that could
 * never be links (`javascript:`, spaces) are a 400 naming each.
 */
export async function translateLinks(
  ctx: Context,
  site: OwnedSite,
  input: TranslateLinksBody,
): Promise<{ links: TranslatedLink[] }> {
  const siteId = site.id;
  const { hrefs } = checkInput(TranslateLinksBody, input);
  const problems: Problem[] = [];
  const parsed = hrefs.map((href, i) => {
    const p = parseHref(href);
    if (p.kind === "invalid") problems.push({ field: `hrefs.${i}`, href, message: p.reason });
    return p;
  });
  if (problems.length) throw refuse(problems);
  const index = await loadPageIndex(ctx.db, siteId);
  const media = hrefs.filter((_, i) => parsed[i]!.kind === "media");
  const checked = media.length
    ? await storableMediaRefs(
        ctx,
        siteId,
        media.map((ref, i) => ({ field: `hrefs.${i}`, ref })),
      )
    : { stored: new Map<string, string>() };
  const sign = await mediaSigner(ctx, siteId, "member", checked.stored.values());
  const links = hrefs.map((href, i): TranslatedLink => {
    const p = parsed[i]!;
    switch (p.kind) {
      case "page": {
        const path = index.pathOf.get(p.pageId);
        return path === undefined
          ? { href, kind: "broken", pageId: p.pageId }
          : { href, kind: "page", pageId: p.pageId, path: `${path}${p.suffix}` };
      }
      case "path": {
        const pageId = index.idOf.get(p.path);
        return pageId === undefined
          ? { href, kind: "broken", path: `${p.path}${p.suffix}` }
          : { href, kind: "page", pageId, path: `${p.path}${p.suffix}` };
      }
      case "media": {
        const stored = checked.stored.get(href);
        return stored ? { href, kind: "media", url: sign(stored) } : { href, kind: "broken" };
      }
      case "external":
        return { href, kind: "external", url: href };
      default:
        return { href, kind: "anchor" };
    }
  });
  return { links };
}

/**
 * Every link of a site that names no page now: references to deleted pages and paths naming no page, in
 * page MDX (by the spans stored with each page, no parsing), the layout's navigation and footer, and
 * collection `link` fields.
 */
export async function listBrokenLinks(ctx: Context, site: OwnedSite): Promise<{ links: BrokenLink[] }> {
  const siteId = site.id;
  const rows = await ctx.db
    .select({ id: pages.id, path: pages.path, content: pages.content, links: pages.links })
    .from(pages)
    .where(eq(pages.siteId, siteId))
    .orderBy(pages.position);
  const index = pageIndexOf(rows);
  const out: BrokenLink[] = [];
  for (const page of rows) {
    for (const href of brokenPageLinks(page.content, linkSpansOf(page.links, page.content), index))
      out.push({ href, where: { type: "page", id: page.id } });
  }
  const [layoutRow] = await ctx.db
    .select({ layout: siteLayouts.layout })
    .from(siteLayouts)
    .where(eq(siteLayouts.siteId, siteId));
  if (layoutRow) {
    const layout = readStoredLayout(layoutRow.layout);
    const check = (href: string, field: string) => {
      if (isBrokenHref(href, index)) out.push({ href, where: { type: "layout", id: siteId, field } });
    };
    layout.header.navigation.forEach((item, i) => {
      check(item.href, `header.navigation.${i}.href`);
      item.children?.forEach((c, j) => {
        check(c.href, `header.navigation.${i}.children.${j}.href`);
      });
    });
    layout.footer.links.forEach((l, i) => {
      check(l.href, `footer.links.${i}.href`);
    });
  }
  const withLinks = (
    await ctx.db
      .select({ id: collections.id, key: collections.key, fields: collections.fields })
      .from(collections)
      .where(eq(collections.siteId, siteId))
  )
    .map((c) => ({ ...c, linkFields: (c.fields as CollectionField[]).filter((f) => f.type === "link") }))
    .filter((c) => c.linkFields.length > 0);
  if (withLinks.length) {
    const keyOf = new Map(withLinks.map((c) => [c.id, c]));
    const items = await ctx.db
      .select({
        id: collectionItems.id,
        collectionId: collectionItems.collectionId,
        values: collectionItems.values,
      })
      .from(collectionItems)
      .where(
        inArray(
          collectionItems.collectionId,
          withLinks.map((c) => c.id),
        ),
      )
      .orderBy(collectionItems.collectionId, collectionItems.position);
    for (const item of items) {
      const c = keyOf.get(item.collectionId)!;
      const values = item.values as Record<string, unknown>;
      for (const f of c.linkFields) {
        const href = values[f.key];
        if (typeof href === "string" && isBrokenHref(href, index))
          out.push({ href, where: { type: "collection", id: item.id, collection: c.key, field: f.key } });
      }
    }
  }
  return { links: out };
}
