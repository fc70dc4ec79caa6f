import { type Static, Type } from "@sinclair/typebox";
import { named } from "@site/domain/core";

// One model per shape: the layout route, its MCP tools and the TypeScript types all read these.

/** The most navigation items (both levels together) a header may hold. */
export const MAX_NAVIGATION_ITEMS = 100;
/** The longest navigation or footer label. */
export const MAX_LABEL = 100;
/** The longest footer text. */
export const MAX_FOOTER_TEXT = 2000;

const Label = Type.String({
  minLength: 1,
  maxLength: MAX_LABEL,
  description: `plain text, 1 to ${MAX_LABEL} characters`,
  error: `1 to ${MAX_LABEL} characters of plain text`,
});
const Href = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "a site path (`/about`, with an optional `#anchor` or `?query`), a page reference (`page:<page_id>`), an in-page `#anchor` or an http(s)/mailto/tel URL. A path naming a page is stored as its reference and read back as the page's current path.",
  error: "a site path (/about), a page reference (page:<id>), #anchor or an http(s)/mailto/tel URL",
});

/** A second-level navigation item: no children of its own. */
export const NavigationChild = Type.Object({
  label: Label,
  href: Href,
  children: Type.Optional(
    Type.Array(Type.Unknown(), {
      maxItems: 0,
      description: "navigation is at most two levels deep",
      error: "navigation is at most two levels deep",
    }),
  ),
});

/** A top-level navigation item, optionally with second-level children. */
export const NavigationItem = Type.Object({
  label: Label,
  href: Href,
  children: Type.Optional(Type.Array(NavigationChild, { maxItems: MAX_NAVIGATION_ITEMS })),
});
/** A top-level navigation item. */
export type NavigationItem = Static<typeof NavigationItem>;

/** A footer link. */
export const FooterLink = Type.Object({ label: Label, href: Href });

/** The layout of a site: logo, header navigation, footer. */
export const Layout = Type.Object({
  logo: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
    description:
      "written: a bare /api/media/<key> path of this site's library, or null; read: that file's signed URL",
  }),
  header: Type.Object({
    navigation: Type.Array(NavigationItem, {
      maxItems: MAX_NAVIGATION_ITEMS,
      description: `at most ${MAX_NAVIGATION_ITEMS} items over both levels`,
    }),
  }),
  footer: Type.Object({
    text: Type.String({ maxLength: MAX_FOOTER_TEXT, description: "plain text" }),
    links: Type.Array(FooterLink, { maxItems: MAX_NAVIGATION_ITEMS }),
  }),
});
/** The layout of a site. */
export type Layout = Static<typeof Layout>;

const Hex = Type.String({
  pattern: "^#[0-9a-fA-F]{6}$",
  description: "#rrggbb",
  error: "a hex colour #rrggbb",
});
const Font = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[^;:{}()<>"\\\\@]+$',
  description: 'a font family name (no ; : { } ( ) < > " \\ @)',
  error: 'a font family name, without ; : { } ( ) < > " \\ @',
});

/** The theme tokens of a site. */
export const Styles = Type.Object({
  colors: Type.Record(Type.String(), Hex, {
    description: "colour name (lower camel case, at most 40 characters, at most 50 colours) → #rrggbb",
  }),
  fonts: Type.Object({ heading: Font, body: Font }),
});
/** The theme tokens of a site. */
export type Styles = Static<typeof Styles>;

/** The body of PUT …/layout: the layout, the styles, or both (each replaced whole). */
export const LayoutUpdate = Type.Object({
  layout: Type.Optional(Layout),
  styles: Type.Optional(Styles),
});
/** The body of PUT …/layout. */
export type LayoutUpdate = Static<typeof LayoutUpdate>;

/** The layout and styles of a site as read, with the time of their last change. */
export const LayoutState = named(
  "LayoutState",
  Type.Object({
    layout: Layout,
    styles: Styles,
    updatedAt: Type.String({ description: "ISO 8601 UTC, microseconds" }),
  }),
);
/** The layout and styles of a site as read. */
export type LayoutState = Static<typeof LayoutState>;

/**
 * The get_site_layout and update_site_layout tools' answer: the layout as REST answers it, and the
 * etag REST sends as its ETag header (a tool has no headers).
 */
export const LayoutAnswer = named(
  "LayoutAnswer",
  Type.Intersect(
    [
      LayoutState,
      Type.Object({
        etag: Type.String({ description: "the version to pass as ifMatch (REST: the ETag header)" }),
      }),
    ],
    { description: "the layout and styles as REST answers them, with the etag REST sends as a header" },
  ),
);
