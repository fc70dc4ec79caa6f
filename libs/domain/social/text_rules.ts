import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SocialPlatform } from "./platform.ts";

// The text limits of the platforms that state one, counted as each platform counts (decision 1301).
// Checked for every target before anything is published; the strict fakes refuse the same.

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

/**
 * Whether a grapheme is an emoji as the platforms count them: a pictograph outside Latin-1 (a plain
 * "©" is a letter; "©️" with its emoji presentation selector is an emoji), a flag (two regional
 * indicators) or a keycap ("1️⃣"), with any modifiers and zero-width joiners it carries.
 */
function isEmoji(g: string): boolean {
  if (/\p{Regional_Indicator}|\u20E3/u.test(g)) return true;
  for (const ch of g) {
    const cp = ch.codePointAt(0)!;
    if (/\p{Extended_Pictographic}/u.test(ch) && (cp >= 0x2000 || g.includes("\uFE0F"))) return true;
  }
  return false;
}

// https://docs.x.com/fundamentals/counting-characters (and twitter-text's config/v3.json, which it
// names as the definition): up to 280 characters, weighted after Unicode NFC: code points in
// U+0000–U+10FF, U+2000–U+200D, U+2010–U+201F and U+2032–U+2037 weigh 1, every other one 2; an emoji
// (with its modifiers and joiners) weighs 2 as a whole; a URL weighs 23 whatever its length (t.co).
const X_LIGHT_RANGES: [number, number][] = [
  [0x0000, 0x10ff],
  [0x2000, 0x200d],
  [0x2010, 0x201f],
  [0x2032, 0x2037],
];
const X_URL_WEIGHT = 23;
// What X links (and so counts as 23), as its reference implementation twitter-text extracts URLs: one
// with a scheme, or a bare domain ("example.com", "docs.example.de/path") of Latin labels (ASCII and
// accented letters, digits, inner hyphens) under a top-level domain, not right after a letter, digit,
// "@" (an e-mail address), "$", "#", "_", ".", "/" or "-". Trailing punctuation is the sentence's.
const LATIN_LABEL = "[a-z0-9\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u024F\\u1E00-\\u1EFF-]+";
const URL_PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}@＠$#＃_./-])(?:https?://[^\\s<>"]+|(?:${LATIN_LABEL}\\.)+[\\p{L}\\p{N}-]+(?::\\d{1,5})?(?:[/?#][^\\s<>"]*)?)`,
  "giu",
);
// IANA's root zone (the `tlds` package, kept current with it), Unicode labels included. Read as a file,
// not imported: under Bun, a JSON module imported here and by mailparser (linkify-it) reached the second
// importer broken, and mailparser failed to load. Read at the first bare domain, not at start-up.
let topLevelDomains: Set<string> | null = null;

/** Whether a match without a scheme is a domain X links: labels of letters, digits and inner hyphens, under a real TLD. */
function isBareDomainUrl(url: string): boolean {
  const host = url.split(/[:/?#]/u, 1)[0]!.toLowerCase();
  const labels = host.split(".");
  if (labels.some((l) => l === "" || l.startsWith("-") || l.endsWith("-"))) return false;
  topLevelDomains ??= new Set<string>(
    JSON.parse(readFileSync(fileURLToPath(import.meta.resolve("tlds")), "utf8")) as string[],
  );
  return topLevelDomains.has(labels.at(-1)!);
}

function xWeight(text: string): number {
  let total = 0;
  for (const g of graphemes.segment(text)) {
    if (isEmoji(g.segment)) {
      total += 2;
      continue;
    }
    for (const ch of g.segment) {
      const cp = ch.codePointAt(0)!;
      total += X_LIGHT_RANGES.some(([a, b]) => cp >= a && cp <= b) ? 1 : 2;
    }
  }
  return total;
}

/** A text's length as X counts it against its 280: weighted, URLs as 23, emoji as 2. */
export function xTextLength(text: string): number {
  const nfc = text.normalize("NFC");
  let total = 0;
  let last = 0;
  for (const m of nfc.matchAll(URL_PATTERN)) {
    let url = m[0];
    // A closing bracket belongs to the URL only when it closes one the URL opened.
    for (;;) {
      const trimmed = url.replace(/[.,;:!?'"]+$/u, "");
      const close = trimmed.at(-1);
      const open = close === ")" ? "(" : close === "]" ? "[" : null;
      const unbalanced = open !== null && trimmed.split(open).length - 1 < trimmed.split(close!).length - 1;
      const next = unbalanced ? trimmed.slice(0, -1) : trimmed;
      if (next === url) break;
      url = next;
    }
    if (/^https?:\/\/$/iu.test(url)) continue;
    if (!/^https?:\/\//iu.test(url) && !isBareDomainUrl(url)) continue;
    total += xWeight(nfc.slice(last, m.index)) + X_URL_WEIGHT;
    last = m.index + url.length;
  }
  return total + xWeight(nfc.slice(last));
}

/**
 * A text's length as Threads counts it against its 500: characters (code points), an emoji counted as
 * its UTF-8 bytes (https://developers.facebook.com/docs/threads/posts, Limitations: "Text posts are
 * limited to 500 characters. Emojis are counted as the number of UTF-8 bytes.").
 */
export function threadsTextLength(text: string): number {
  let total = 0;
  for (const g of graphemes.segment(text))
    total += isEmoji(g.segment) ? Buffer.byteLength(g.segment, "utf8") : [...g.segment].length;
  return total;
}

/** A platform's text limit: the most a post's text may count there, how it is counted, in words. */
export type TextRule = { max: number; count: (text: string) => number; how: string };

/** The platforms with a text limit (the others state none the service checks). */
export const PLATFORM_TEXT_RULES: Partial<Record<SocialPlatform, TextRule>> = {
  // https://docs.x.com/fundamentals/counting-characters
  x: { max: 280, count: xTextLength, how: "URLs count 23, emoji and CJK 2" },
  // https://developers.facebook.com/docs/threads/posts (Limitations)
  threads: { max: 500, count: threadsTextLength, how: "an emoji counts its UTF-8 bytes" },
};

/** Why `text` is too long for `platform`, in words naming the platform; null when it fits or no limit is known. */
export function platformTextViolation(platform: SocialPlatform, text: string): string | null {
  const rule = PLATFORM_TEXT_RULES[platform];
  if (!rule) return null;
  const length = rule.count(text);
  return length > rule.max ? `${length} characters for ${platform}, at most ${rule.max} (${rule.how})` : null;
}

/**
 * The texts a post sends that are too long for their platforms, each naming its field: the platform's
 * override (`platformOverrides.<platform>`) when it has one, else `content`.
 */
export function postTextViolations(
  platforms: SocialPlatform[],
  content: string,
  overrides: Record<string, string>,
): { field: string; message: string }[] {
  return platforms.flatMap((platform) => {
    const own = overrides[platform];
    const why = platformTextViolation(platform, own ?? content);
    return why
      ? [{ field: own === undefined ? "content" : `platformOverrides.${platform}`, message: why }]
      : [];
  });
}
