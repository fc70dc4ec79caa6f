import { collectionItems, pages, siteLayouts, type Tx } from "@site/db";
import type { MediaRefBases } from "@site/domain/media";
import { and, eq, sql } from "drizzle-orm";
import { recordCloneFiles } from "./clone_files.ts";
import { DEFAULT_STYLES } from "./defaults.ts";
import { defaultStoredLayout } from "./layout.ts";
import { pageIndexOf, remapHref } from "./links.ts";
import { linkSpansOf, remapPageLinks } from "./page_links.ts";

/** A stored JSON value with every `page:<id>` string pointed through `map` (old page id → new). */
function remapJson(value: unknown, map: Map<string, string>): unknown {
  if (typeof value === "string") return remapHref(value, map);
  if (Array.isArray(value)) return value.map((v) => remapJson(v, map));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, remapJson(v, map)]));
  return value;
}

/**
 * Copies a template host site into a new site inside the creating transaction (a failure anywhere rolls
 * the whole site back): pages, layout and styles, chrome strings and default locale, collections with
 * their items. Media references stay as they are (clones copy references, not files), and the host files
 * they name are recorded as the clone's (recordCloneFiles, decision 0610); every page
 * reference — in page MDX, navigation, footer and link fields — is pointed at the clone's own page of
 * the same path.
 */
export async function copyTemplate(
  tx: Tx,
  hostSiteId: string,
  siteId: string,
  bases: MediaRefBases,
): Promise<void> {
  const host = sql`${hostSiteId}::uuid`;
  const site = sql`${siteId}::uuid`;
  const copied = (await tx.execute(sql`
    insert into pages (site_id, path, title, content, position, links)
    select ${site}, path, title, content, position, links from pages where site_id = ${host}
    returning id, path`)) as unknown as { id: string; path: string }[];
  const hostPages = await tx
    .select({ id: pages.id, path: pages.path })
    .from(pages)
    .where(eq(pages.siteId, hostSiteId));
  const cloneIds = pageIndexOf(copied).idOf;
  const map = new Map<string, string>();
  for (const p of hostPages) {
    const to = cloneIds.get(p.path);
    if (to) map.set(p.id, to);
  }

  // Page references in MDX sit at the stored spans; a UUID for a UUID keeps every span valid.
  const linked = await tx
    .select({ id: pages.id, content: pages.content, links: pages.links })
    .from(pages)
    .where(and(eq(pages.siteId, siteId), sql`jsonb_array_length(${pages.links}) > 0`));
  for (const row of linked) {
    const content = remapPageLinks(row.content, linkSpansOf(row.links, row.content), map);
    if (content !== row.content) await tx.update(pages).set({ content }).where(eq(pages.id, row.id));
  }

  const [layout] = await tx
    .select({ layout: siteLayouts.layout, styles: siteLayouts.styles })
    .from(siteLayouts)
    .where(eq(siteLayouts.siteId, hostSiteId));
  await tx.insert(siteLayouts).values({
    siteId,
    layout: layout ? remapJson(layout.layout, map) : defaultStoredLayout(pageIndexOf(copied)),
    styles: layout?.styles ?? DEFAULT_STYLES,
  });

  await tx.execute(sql`
    insert into site_chrome_strings (site_id, locale, key, value)
    select ${site}, locale, key, value from site_chrome_strings where site_id = ${host}`);
  await tx.execute(sql`
    update sites set default_locale = h.default_locale from sites h
    where sites.id = ${site} and h.id = ${host}`);

  await tx.execute(sql`
    insert into collections (site_id, key, name, fields)
    select ${site}, key, name, fields from collections where site_id = ${host}`);
  await tx.execute(sql`
    insert into collection_items (collection_id, position, values)
    select nc.id, ci.position, ci.values
    from collection_items ci
    join collections oc on oc.id = ci.collection_id and oc.site_id = ${host}
    join collections nc on nc.site_id = ${site} and nc.key = oc.key`);
  await recordCloneFiles(tx, bases, hostSiteId, siteId);
  if (map.size === 0) return;
  const referring = (await tx.execute(sql`
    select ci.id, ci.values from collection_items ci
    join collections c on c.id = ci.collection_id
    where c.site_id = ${site} and ci.values::text like '%"page:%'`)) as unknown as {
    id: string;
    values: unknown;
  }[];
  for (const item of referring) {
    await tx
      .update(collectionItems)
      .set({ values: remapJson(item.values, map) as Record<string, unknown> })
      .where(eq(collectionItems.id, item.id));
  }
}
