import { siteChromeStrings, sites } from "@site/db";
import { plainTextProblem } from "@site/domain/content";
import { type Context, checkInput, notFound, type OwnedSite } from "@site/domain/core";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type Problem, refuse } from "./_input.ts";
import { CHROME_DEFAULTS } from "./chrome_defaults.ts";
import { ChromeSettingsUpdate, ChromeStringsUpdate, type ChromeView } from "./chrome_model.ts";
import { canonicalLocale, fallbackChain } from "./locales.ts";

/** The longest chrome string key, and value. */
export const MAX_CHROME_KEY = 100;
export const MAX_CHROME_VALUE = 2000;
/** The most keys one PUT may set or restore. */
export const MAX_CHROME_KEYS_PER_WRITE = 500;

const KEY = /^[a-z][a-zA-Z0-9]*(?:\.[a-z][a-zA-Z0-9]*)*$/;

/** A locale as written by a caller: canonical, or 400 VALIDATION_ERROR naming `field`. */
export function requireLocale(tag: string, field = "locale"): string {
  const locale = canonicalLocale(tag);
  if (!locale)
    throw refuse([
      {
        field,
        locale: tag,
        message: "a BCP 47 language tag: language, optional script and region (en, de-CH, zh-Hant-TW)",
      },
    ]);
  return locale;
}

async function siteDefaultLocale(ctx: Context, siteId: string): Promise<string> {
  const [site] = await ctx.db
    .select({ defaultLocale: sites.defaultLocale })
    .from(sites)
    .where(eq(sites.id, siteId));
  if (!site) throw notFound("site");
  return site.defaultLocale;
}

/** Every locale a site has strings in, plus its default, sorted. */
async function siteLocales(ctx: Context, siteId: string, defaultLocale: string): Promise<string[]> {
  const rows = await ctx.db
    .selectDistinct({ locale: siteChromeStrings.locale })
    .from(siteChromeStrings)
    .where(eq(siteChromeStrings.siteId, siteId));
  return [...new Set([defaultLocale, ...rows.map((r) => r.locale)])].sort();
}

/**
 * The chrome strings of a site read in `locale`, key by key: the locale, its language, the site's
 * default locale (and its language), then the built-in English text. Keys the site added itself are
 * included wherever the chain finds them.
 */
export async function resolveChromeStrings(
  ctx: Context,
  siteId: string,
  locale: string,
  defaultLocale: string,
): Promise<Record<string, string>> {
  const chain = fallbackChain(locale, defaultLocale);
  const rows = await ctx.db
    .select({ locale: siteChromeStrings.locale, key: siteChromeStrings.key, value: siteChromeStrings.value })
    .from(siteChromeStrings)
    .where(and(eq(siteChromeStrings.siteId, siteId), inArray(siteChromeStrings.locale, chain)));
  const strings: Record<string, string> = { ...CHROME_DEFAULTS };
  // Apply from the weakest locale of the chain to the strongest, so the strongest wins.
  const rank = new Map(chain.map((l, i) => [l, i]));
  rows.sort((a, b) => rank.get(b.locale)! - rank.get(a.locale)!);
  for (const r of rows) strings[r.key] = r.value;
  return Object.fromEntries(Object.entries(strings).sort(([a], [b]) => a.localeCompare(b)));
}

/** The chrome of a site for a member, in `locale` (the default locale when none is asked for). */
export async function getChrome(ctx: Context, site: OwnedSite, locale?: string): Promise<ChromeView> {
  const siteId = site.id;
  const defaultLocale = await siteDefaultLocale(ctx, siteId);
  const wanted = locale ? requireLocale(locale) : defaultLocale;
  const [locales, strings] = await Promise.all([
    siteLocales(ctx, siteId, defaultLocale),
    resolveChromeStrings(ctx, siteId, wanted, defaultLocale),
  ]);
  return { locale: wanted, defaultLocale, locales, strings };
}

function stringProblems(strings: Record<string, string | null>): Problem[] {
  const problems: Problem[] = [];
  const entries = Object.entries(strings);
  if (entries.length === 0) problems.push({ field: "strings", message: "give at least one key" });
  if (entries.length > MAX_CHROME_KEYS_PER_WRITE)
    problems.push({ field: "strings", message: `at most ${MAX_CHROME_KEYS_PER_WRITE} keys per write` });
  for (const [key, value] of entries) {
    if (key.length > MAX_CHROME_KEY || !KEY.test(key)) {
      problems.push({
        field: "strings",
        key,
        message: `key "${key}": dotted lower camel case (footer.copyright), at most ${MAX_CHROME_KEY} characters`,
      });
      continue;
    }
    if (value === null) continue;
    if (typeof value !== "string") {
      problems.push({
        field: "strings",
        key,
        message: `key "${key}": a string, or null to restore the default`,
      });
      continue;
    }
    if (value.length > MAX_CHROME_VALUE)
      problems.push({
        field: "strings",
        key,
        message: `key "${key}": at most ${MAX_CHROME_VALUE} characters`,
      });
    const text = plainTextProblem(value);
    if (text) problems.push({ field: "strings", key, message: `key "${key}": ${text}` });
  }
  return problems;
}

/**
 * Merges chrome strings into one locale of a site: each key set to its text, or restored to the
 * default with null. All keys are checked first; one bad key refuses the whole write, naming each.
 */
export async function setChromeStrings(
  ctx: Context,
  site: OwnedSite,
  localeTag: string,
  input: ChromeStringsUpdate,
): Promise<ChromeView> {
  const siteId = site.id;
  const locale = requireLocale(localeTag);
  const body = checkInput(ChromeStringsUpdate, input);
  const problems = stringProblems(body.strings);
  if (problems.length > 0) throw refuse(problems);
  const set = Object.entries(body.strings).filter((e): e is [string, string] => e[1] !== null);
  const restore = Object.entries(body.strings)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  await ctx.db.transaction(async (tx) => {
    if (set.length > 0) {
      await tx
        .insert(siteChromeStrings)
        .values(set.map(([key, value]) => ({ siteId, locale, key, value })))
        .onConflictDoUpdate({
          target: [siteChromeStrings.siteId, siteChromeStrings.locale, siteChromeStrings.key],
          set: { value: sql`excluded.value`, updatedAt: sql`now()` },
        });
    }
    if (restore.length > 0) {
      await tx
        .delete(siteChromeStrings)
        .where(
          and(
            eq(siteChromeStrings.siteId, siteId),
            eq(siteChromeStrings.locale, locale),
            inArray(siteChromeStrings.key, restore),
          ),
        );
    }
    await tx.update(sites).set({ updatedAt: sql`now()` }).where(eq(sites.id, siteId));
  });
  return getChrome(ctx, site, locale);
}

/** Sets the locale a site's chrome falls back to before the built-in English. */
export async function setChromeSettings(
  ctx: Context,
  site: OwnedSite,
  input: ChromeSettingsUpdate,
): Promise<ChromeView> {
  const siteId = site.id;
  const body = checkInput(ChromeSettingsUpdate, input);
  const defaultLocale = requireLocale(body.defaultLocale, "defaultLocale");
  await ctx.db.update(sites).set({ defaultLocale, updatedAt: sql`now()` }).where(eq(sites.id, siteId));
  return getChrome(ctx, site, defaultLocale);
}
