const SHAPE = /^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|[0-9]{3}))?$/;

/**
 * A BCP 47 tag in its canonical form (`de-ch` → `de-CH`), limited to language, optional script and
 * optional region; null for anything else (private use, extensions, variants, garbage).
 */
export function canonicalLocale(tag: string): string | null {
  if (tag.length === 0 || tag.length > 35) return null;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical && SHAPE.test(canonical) ? canonical : null;
  } catch {
    return null;
  }
}

/** The language subtag of a canonical locale (`de-CH` → `de`). */
export function languageOf(locale: string): string {
  return locale.split("-")[0]!;
}

/** Where a read of `locale` looks, key by key: the locale, its language, the default locale and its language. */
export function fallbackChain(locale: string, defaultLocale: string): string[] {
  return [...new Set([locale, languageOf(locale), defaultLocale, languageOf(defaultLocale)])];
}

/**
 * The locale a visitor gets from an Accept-Language header: the first tag (by weight) that the site has
 * strings in, exactly or by its language; the site's default locale when none fits.
 */
export function negotiateLocale(
  header: string | null | undefined,
  available: string[],
  fallback: string,
): string {
  if (!header) return fallback;
  const wanted = header
    .split(",")
    .map((part, order) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), order };
    })
    .filter((w) => w.tag && w.tag !== "*" && Number.isFinite(w.q) && w.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  const has = new Set(available);
  for (const w of wanted) {
    const locale = canonicalLocale(w.tag);
    if (!locale) continue;
    if (has.has(locale)) return locale;
    if (has.has(languageOf(locale))) return languageOf(locale);
  }
  return fallback;
}
