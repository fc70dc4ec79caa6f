import { DEFAULT_STYLES } from "./defaults.ts";
import type { Layout, NavigationItem, Styles } from "./layout_model.ts";

// Layout rows written before the layout route (and template hosts edited by hand) may hold other shapes:
// read what fits the model, drop the rest, so every reader answers the documented shape.

type Loose = Record<string, unknown>;
const obj = (v: unknown): Loose => (v && typeof v === "object" && !Array.isArray(v) ? (v as Loose) : {});
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function link(v: unknown): { label: string; href: string } | null {
  const o = obj(v);
  const label = str(o.label);
  const href = str(o.href) ?? str(o.path);
  return label !== null && href !== null ? { label, href } : null;
}

function navigationItem(v: unknown): NavigationItem | null {
  const l = link(v);
  if (!l) return null;
  const children = arr(obj(v).children)
    .map(link)
    .filter((c): c is { label: string; href: string } => c !== null);
  return children.length ? { ...l, children } : l;
}

/** A stored layout read into the model's shape (a legacy `header.logo` or `path` is understood). */
export function readStoredLayout(raw: unknown): Layout {
  const o = obj(raw);
  const header = obj(o.header);
  const footer = obj(o.footer);
  return {
    logo: str(o.logo) ?? str(header.logo),
    header: {
      navigation: arr(header.navigation)
        .map(navigationItem)
        .filter((n): n is NavigationItem => n !== null),
    },
    footer: {
      text: str(footer.text) ?? "",
      links: arr(footer.links)
        .map(link)
        .filter((l): l is { label: string; href: string } => l !== null),
    },
  };
}

/** Stored styles read into the model's shape: hex colours only, fonts defaulted. */
export function readStoredStyles(raw: unknown): Styles {
  const o = obj(raw);
  const colors: Record<string, string> = {};
  for (const [name, value] of Object.entries(obj(o.colors))) {
    if (typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value)) colors[name] = value;
  }
  const fonts = obj(o.fonts);
  return {
    colors,
    fonts: {
      heading: str(fonts.heading) ?? DEFAULT_STYLES.fonts.heading,
      body: str(fonts.body) ?? DEFAULT_STYLES.fonts.body,
    },
  };
}
