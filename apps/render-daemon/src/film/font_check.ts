// Which fonts the page asked for that this host cannot draw (issue 12, decision 1203).
import type { Page } from "puppeteer-core";

/** Families a page names for the platform's own UI font, with a generic after them: never missing. */
const PLATFORM_UI = [
  "-apple-system",
  "blinkmacsystemfont",
  "segoe ui",
  "segoe ui emoji",
  "segoe ui symbol",
  "apple color emoji",
  "noto color emoji",
  "sf pro",
  "sf pro text",
  "sf pro display",
  "helvetica neue",
  "roboto",
  "ubuntu",
  "cantarell",
  "oxygen",
  "oxygen-sans",
  "fira sans",
  "droid sans",
  "android emoji",
  "emojione color",
  "twemoji mozilla",
];

/**
 * Looks at the fonts the page's text asks for (the computed font-family of up to 3000 elements with
 * text of their own) and tells, in warning sentences: stacks none of whose named families this host has
 * (a fallback was drawn), and emoji or CJK text when the host has no font for it (drawn as boxes).
 */
export async function missingFontWarnings(page: Page): Promise<string[]> {
  const found = await page
    .evaluate((platform: string[]) => {
      const generic = new Set([
        "serif",
        "sans-serif",
        "monospace",
        "cursive",
        "fantasy",
        "system-ui",
        "ui-serif",
        "ui-sans-serif",
        "ui-monospace",
        "ui-rounded",
        "emoji",
        "math",
        "fangsong",
        "inherit",
        "initial",
        "unset",
      ]);
      const stacks = new Set<string>();
      let seen = 0;
      for (const el of Array.from(document.querySelectorAll("body, body *"))) {
        if (seen >= 3000) break;
        const own = Array.from(el.childNodes).some(
          (n) => n.nodeType === 3 && (n.textContent ?? "").trim() !== "",
        );
        if (!own) continue;
        seen++;
        stacks.add(getComputedStyle(el).fontFamily);
      }
      const g = document.createElement("canvas").getContext("2d") as CanvasRenderingContext2D;
      const sample = "mmmmmmmmmmlli WQ@#0";
      const width = (font: string) => {
        g.font = `72px ${font}`;
        return g.measureText(sample).width;
      };
      const mono = width("monospace");
      const serif = width("serif");
      const has = (family: string) => {
        const q = `"${family.replace(/"/g, "")}"`;
        return width(`${q}, monospace`) !== mono || width(`${q}, serif`) !== serif;
      };
      const hasGlyphFont = (families: string[], probe: string) =>
        families.some((f) => {
          g.font = `72px "${f}"`;
          return document.fonts.check(g.font, probe) && has(f);
        });
      const missing = new Set<string>();
      for (const stack of stacks) {
        const names = stack
          .split(",")
          .map((n) => n.trim().replace(/^["']|["']$/g, ""))
          .filter((n) => n && !generic.has(n.toLowerCase()));
        const named = names.filter((n) => !platform.includes(n.toLowerCase()));
        if (named.length === 0) continue;
        if (!names.some(has)) missing.add(named[0]);
      }
      // biome-ignore lint/performance/useDomNodeTextContent: only text that is drawn matters (not scripts, hidden nodes)
      const text = document.body?.innerText ?? "";
      const emoji = /\p{Emoji_Presentation}/u.test(text);
      const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(text);
      return {
        missing: [...missing].slice(0, 5),
        emoji:
          emoji &&
          !hasGlyphFont(["Noto Color Emoji", "Apple Color Emoji", "Segoe UI Emoji", "Twemoji"], "😀"),
        cjk:
          cjk &&
          !hasGlyphFont(
            [
              "Noto Sans CJK SC",
              "Noto Sans CJK JP",
              "Noto Serif CJK SC",
              "WenQuanYi Zen Hei",
              "Droid Sans Fallback",
            ],
            "漢",
          ),
      };
    }, PLATFORM_UI)
    .catch(() => null);
  if (!found) return [];
  const out: string[] = [];
  if (found.missing.length > 0)
    out.push(
      `the page asked for fonts this host does not have (${found.missing.join(", ")}); a fallback font was drawn`,
    );
  if (found.emoji)
    out.push("the page shows emoji but this host has no emoji font; they were drawn as empty boxes");
  if (found.cjk)
    out.push(
      "the page shows Chinese, Japanese or Korean text but this host has no font for it; it was drawn as boxes",
    );
  return out;
}
