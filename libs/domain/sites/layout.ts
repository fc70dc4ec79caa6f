import { siteLayouts, sites } from "@site/db";
import { plainTextProblem } from "@site/domain/content";
import { AppError, type Context, checkInput, type OwnedSite } from "@site/domain/core";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type Problem, refuse } from "./_input.ts";
import { DEFAULT_LAYOUT, DEFAULT_STYLES } from "./defaults.ts";
import {
  type Layout,
  type LayoutState,
  LayoutUpdate,
  MAX_NAVIGATION_ITEMS,
  type NavigationItem,
  type Styles,
} from "./layout_model.ts";
import { loadPageIndex, type PageIndex, parseHref, readHref, storeHref } from "./links.ts";
import { mediaSigner, type Reader, storableMediaRefs } from "./site_media.ts";
import { readStoredLayout, readStoredStyles } from "./stored_layout.ts";

const COLOR_NAME = /^[a-z][a-zA-Z0-9]{0,39}$/;
const MAX_COLORS = 50;

/** The ETag of a layout version. */
export function layoutEtag(version: number): string {
  return `"layout-${version}"`;
}

/** The versions an If-Match header names: "any" for `*`, else the listed ones (none when unreadable). */
function matchedVersions(ifMatch: string): number[] | "any" {
  if (ifMatch.trim() === "*") return "any";
  const out: number[] = [];
  for (const tag of ifMatch.split(",")) {
    const m = /^\s*(?:W\/)?"layout-(\d{1,9})"\s*$/.exec(tag);
    if (m) out.push(Number(m[1]));
  }
  return out;
}

/** A layout with links translated to current paths and the logo signed for `reader`. */
export function layoutView(stored: Layout, index: PageIndex, sign: (path: string) => string): Layout {
  const href = (h: string) => readHref(h, index);
  return {
    logo: stored.logo ? sign(stored.logo) : null,
    header: {
      navigation: stored.header.navigation.map((item) => ({
        label: item.label,
        href: href(item.href),
        ...(item.children
          ? { children: item.children.map((c) => ({ label: c.label, href: href(c.href) })) }
          : {}),
      })),
    },
    footer: {
      text: stored.footer.text,
      links: stored.footer.links.map((l) => ({ label: l.label, href: href(l.href) })),
    },
  };
}

const rowColumns = {
  layout: siteLayouts.layout,
  styles: siteLayouts.styles,
  version: siteLayouts.version,
  updatedAt: sql<string>`to_char(${siteLayouts.updatedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
};

/** Reads a site's stored layout row, or null for a legacy site without one. */
async function storedRow(ctx: Context, siteId: string) {
  const [row] = await ctx.db.select(rowColumns).from(siteLayouts).where(eq(siteLayouts.siteId, siteId));
  return row ?? null;
}

type Row = NonNullable<Awaited<ReturnType<typeof storedRow>>>;

async function stateOf(ctx: Context, input: { siteId: string; row: Row; index: PageIndex; reader: Reader }) {
  const { siteId, row, index, reader } = input;
  const stored = readStoredLayout(row.layout);
  const sign = await mediaSigner(ctx, siteId, reader, stored.logo ? [stored.logo] : []);
  const state = {
    layout: layoutView(stored, index, sign),
    styles: readStoredStyles(row.styles),
    updatedAt: row.updatedAt,
  };
  return { state, etag: layoutEtag(row.version) };
}

/** Gives a legacy site without a layout row the default one. */
async function ensureRow(ctx: Context, siteId: string): Promise<void> {
  await ctx.db
    .insert(siteLayouts)
    .values({ siteId, layout: DEFAULT_LAYOUT, styles: DEFAULT_STYLES })
    .onConflictDoNothing();
}

/** The layout and styles of a site for `reader`, with the ETag of this version. */
export async function getLayout(
  ctx: Context,
  site: OwnedSite,
  reader: Reader = "member",
): Promise<{ state: LayoutState; etag: string }> {
  const siteId = site.id;
  // The row and the page index are independent: one round trip, not two (the public read's budget).
  let [row, index] = await Promise.all([storedRow(ctx, siteId), loadPageIndex(ctx.db, siteId)]);
  if (!row) {
    await ensureRow(ctx, siteId);
    row = (await storedRow(ctx, siteId))!;
  }
  return stateOf(ctx, { siteId, row, index, reader });
}

function navigationProblems(navigation: NavigationItem[]): Problem[] {
  const problems: Problem[] = [];
  const at = "layout.header.navigation";
  let count = 0;
  const link = (field: string, label: string, href: string) => {
    const text = plainTextProblem(label);
    if (text) problems.push({ field: `${field}.label`, message: text });
    const parsed = parseHref(href);
    if (parsed.kind === "invalid") problems.push({ field: `${field}.href`, href, message: parsed.reason });
    else if (parsed.kind === "media")
      problems.push({ field: `${field}.href`, href, message: "link to a page, not to a media file" });
  };
  navigation.forEach((item, i) => {
    count += 1 + (item.children?.length ?? 0);
    link(`${at}.${i}`, item.label, item.href);
    item.children?.forEach((c, j) => {
      link(`${at}.${i}.children.${j}`, c.label, c.href);
      if (c.children?.length)
        problems.push({
          field: `${at}.${i}.children.${j}.children`,
          message: "navigation is at most two levels deep",
        });
    });
  });
  if (count > MAX_NAVIGATION_ITEMS)
    problems.push({
      field: at,
      message: `at most ${MAX_NAVIGATION_ITEMS} items over both levels (got ${count})`,
    });
  return problems;
}

function layoutProblems(layout: Layout): Problem[] {
  const problems = navigationProblems(layout.header.navigation);
  const footer = plainTextProblem(layout.footer.text);
  if (footer) problems.push({ field: "layout.footer.text", message: footer });
  layout.footer.links.forEach((l, i) => {
    const text = plainTextProblem(l.label);
    if (text) problems.push({ field: `layout.footer.links.${i}.label`, message: text });
    const parsed = parseHref(l.href);
    if (parsed.kind === "invalid")
      problems.push({ field: `layout.footer.links.${i}.href`, href: l.href, message: parsed.reason });
  });
  return problems;
}

function stylesProblems(styles: Styles): Problem[] {
  const names = Object.keys(styles.colors);
  const problems: Problem[] = names
    .filter((n) => !COLOR_NAME.test(n))
    .map((n) => ({
      field: `styles.colors.${n}`,
      message: "colour names are lower camel case, at most 40 characters",
    }));
  if (names.length > MAX_COLORS)
    problems.push({ field: "styles.colors", message: `at most ${MAX_COLORS} colours (got ${names.length})` });
  return problems;
}

/** The layout as stored: internal paths as page references, the logo as a bare path. */
function storedLayout(layout: Layout, index: PageIndex, logo: string | null): Layout {
  const href = (h: string) => storeHref(h, index);
  return {
    logo,
    header: {
      navigation: layout.header.navigation.map((item) => ({
        label: item.label,
        href: href(item.href),
        ...(item.children?.length
          ? { children: item.children.map((c) => ({ label: c.label, href: href(c.href) })) }
          : {}),
      })),
    },
    footer: {
      text: layout.footer.text,
      links: layout.footer.links.map((l) => ({ label: l.label, href: href(l.href) })),
    },
  };
}

/** The default layout as a new site stores it: "Home" pointing at its welcome page by reference. */
export function defaultStoredLayout(index: PageIndex): Layout {
  return storedLayout(DEFAULT_LAYOUT, index, null);
}

/**
 * Replaces a site's layout, styles or both. With `ifMatch`, only while the stored version still matches
 * (else 412 PRECONDITION_FAILED, nothing changed): two writers holding one ETag get one 200 and one 412,
 * because the version check and the write are one UPDATE that the second writer re-evaluates after the
 * first commits. Every refusal is a 400 naming each field, and nothing is stored.
 */
export async function updateLayout(
  ctx: Context,
  site: OwnedSite,
  input: LayoutUpdate,
  opts: { ifMatch?: string | null } = {},
): Promise<{ state: LayoutState; etag: string }> {
  const siteId = site.id;
  const body = checkInput(LayoutUpdate, input);
  if (!body.layout && !body.styles) throw refuse([{ field: "body", message: "give layout, styles or both" }]);
  const problems = [
    ...(body.layout ? layoutProblems(body.layout) : []),
    ...(body.styles ? stylesProblems(body.styles) : []),
  ];
  let logo: string | null = null;
  if (body.layout?.logo) {
    const media = await storableMediaRefs(ctx, siteId, [{ field: "layout.logo", ref: body.layout.logo }]);
    problems.push(...media.problems);
    logo = media.stored.get(body.layout.logo) ?? null;
  }
  if (problems.length > 0) throw refuse(problems);
  const index = await loadPageIndex(ctx.db, siteId);
  await ensureRow(ctx, siteId);
  const versions = opts.ifMatch ? matchedVersions(opts.ifMatch) : "any";
  const updated = await ctx.db
    .update(siteLayouts)
    .set({
      ...(body.layout ? { layout: storedLayout(body.layout, index, logo) } : {}),
      ...(body.styles ? { styles: body.styles } : {}),
      version: sql`${siteLayouts.version} + 1`,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(siteLayouts.siteId, siteId),
        versions === "any" ? undefined : inArray(siteLayouts.version, versions.length ? versions : [-1]),
      ),
    )
    .returning(rowColumns);
  if (updated.length === 0) {
    throw new AppError(
      "PRECONDITION_FAILED",
      "the layout changed since that ETag was read: GET it again, reapply the change and send the new ETag in If-Match",
      [{ field: "If-Match", message: "stale ETag" }],
    );
  }
  await ctx.db.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
  return stateOf(ctx, { siteId, row: updated[0]!, index, reader: "member" });
}
