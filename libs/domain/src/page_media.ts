import { and, eq, inArray, or } from "drizzle-orm";
import { mediaFiles, sites } from "@site/db";
import type { Context } from "./context.ts";
import { AppError } from "./errors.ts";
import type { MediaContext } from "./media_library.ts";
import { legacyStoragePrefixes, parseMediaRef } from "./media_refs.ts";
import { settlePendingUploads } from "./media_upload.ts";

/** What a page write learned about its media references. */
export type PageMediaCheck = { warnings: string[] };

/** One media reference found in MDX, with the line it sits on. */
export type FoundRef = { ref: string; line: number; fromMedia: boolean };

const TAG = /<(\/?)([A-Za-z][\w.]*)((?:[^>"'{}]|"[^"]*"|'[^']*'|\{[^{}]*\})*?)(\/?)>/g;
const SRC = /\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|\{\s*["'`]([^"'`]*)["'`]\s*\})/;

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Finds every media reference: `src` of each Media, and any /api/media/… or legacy storage URL. */
export function findMediaRefs(
  content: string,
  legacyPrefixes: string[],
): { refs: FoundRef[]; bareMedia: { line: number; src: string }[] } {
  const refs: FoundRef[] = [];
  const bareMedia: { line: number; src: string }[] = [];
  const stack: string[] = [];
  for (const m of content.matchAll(TAG)) {
    const [, closing, name, attrs, selfClosing] = m;
    if (closing) {
      const at = stack.lastIndexOf(name!);
      if (at >= 0) stack.length = at;
      continue;
    }
    if (name === "Media") {
      const s = SRC.exec(attrs ?? "");
      const src = s ? (s[1] ?? s[2] ?? s[3] ?? "") : "";
      const line = lineAt(content, m.index);
      if (s) refs.push({ ref: src, line, fromMedia: true });
      const nested =
        stack.length >= 2 && stack[stack.length - 1] === "Column" && stack[stack.length - 2] === "Column";
      if (!nested) bareMedia.push({ line, src });
    }
    if (!selfClosing) stack.push(name!);
  }
  const others = [
    /\/api\/media\/[^\s"'`)<>{}\]]+/g,
    ...legacyPrefixes.map(
      (p) => new RegExp(`${p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}[^\\s"'\`)<>{}\\]]+`, "g"),
    ),
  ];
  const seen = new Set(refs.map((r) => `${r.line}:${r.ref}`));
  for (const re of others) {
    for (const m of content.matchAll(re)) {
      // Include an absolute prefix just before a bare path, so `https://host/api/media/…` reads whole.
      let start = m.index;
      const before = content.slice(Math.max(0, start - 300), start);
      const abs = /https?:\/\/[^\s"'`()<>{}]+$/.exec(before);
      if (abs && m[0].startsWith("/api/media/")) start -= abs[0].length;
      const ref = content.slice(start, m.index + m[0].length);
      const line = lineAt(content, start);
      const id = `${line}:${ref}`;
      if (seen.has(id) || [...seen].some((s) => s.startsWith(`${line}:`) && s.endsWith(m[0]))) continue;
      seen.add(id);
      refs.push({ ref, line, fromMedia: false });
    }
  }
  return { refs, bareMedia };
}

/**
 * Checks the media references of page MDX against the library: each must name an existing file of this
 * site or of the template host it was cloned from, by its canonical url (never a displayUrl with a grant,
 * never an outside URL); otherwise 400 VALIDATION_ERROR listing each bad reference and why. A bare Media
 * outside Column > Column passes with a warning that the visual editor cannot edit it.
 */
export async function checkPageMedia(ctx: Context, siteId: string, content: string): Promise<PageMediaCheck> {
  const { refs, bareMedia } = findMediaRefs(content, legacyStoragePrefixes(ctx.config));
  const problems: { ref: string; line: number; reason: string }[] = [];
  const wanted = new Map<string, FoundRef[]>();
  for (const r of refs) {
    const parsed = parseMediaRef(ctx.config, r.ref.trim());
    if (parsed.kind === "outside") {
      problems.push({
        ref: r.ref,
        line: r.line,
        reason: "outside URL: embed the url of a file of this site's library",
      });
      continue;
    }
    if (parsed.kind === "path" && /(^|&)(k|t)=/.test(parsed.query)) {
      problems.push({
        ref: r.ref,
        line: r.line,
        reason: "a displayUrl with a grant: persist the canonical url (/api/media/<key>) instead",
      });
      continue;
    }
    wanted.set(parsed.key, [...(wanted.get(parsed.key) ?? []), r]);
  }
  if (wanted.size > 0) {
    // Uploads that went straight to object storage become files once settled.
    const store = (ctx as Partial<MediaContext>).store;
    if (store) await settlePendingUploads({ ...ctx, store }, siteId);
    const [site] = await ctx.db
      .select({ host: sites.clonedFromSiteId })
      .from(sites)
      .where(eq(sites.id, siteId))
      .limit(1);
    const owners = site?.host ? [siteId, site.host] : [siteId];
    const found = await ctx.db
      .select({ key: mediaFiles.key })
      .from(mediaFiles)
      .where(
        and(inArray(mediaFiles.key, [...wanted.keys()]), or(...owners.map((o) => eq(mediaFiles.siteId, o)))),
      );
    const known = new Set(found.map((f) => f.key));
    for (const [key, rs] of wanted) {
      if (known.has(key)) continue;
      for (const r of rs)
        problems.push({ ref: r.ref, line: r.line, reason: "unknown file: not in this site's media library" });
    }
  }
  if (problems.length > 0) {
    problems.sort((a, b) => a.line - b.line);
    throw new AppError(
      "VALIDATION_ERROR",
      `content: ${problems.length} media reference(s) do not name files of this site's library; list the library (GET …/media) and use an image's url`,
      problems.map((p) => ({ field: "content", ref: p.ref, line: p.line, message: p.reason })),
    );
  }
  return {
    warnings: bareMedia.map(
      (b) =>
        `line ${b.line}: Media${b.src ? ` (${b.src})` : ""} is not inside Column > Column; it renders, but the visual editor cannot edit it`,
    ),
  };
}
