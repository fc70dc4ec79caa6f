import { isScanFailure, MAX_PAGE_MEDIA_REFS, scanPage } from "@site/domain/content";
import type { Context } from "@site/domain/core";
import {
  filesOfSite,
  grantMemberUrl,
  grantVisitorUrl,
  isPublicIdentityKey,
  mediaRefBases,
} from "@site/domain/media";

/** A media reference a read left unsigned, and why. */
export type UnsignedMedia = { ref: string; line: number; reason: string };

/**
 * Page MDX as a reader gets it: sanitized (mdx_sanitize.ts) and its media signed; what was left unsigned;
 * and notes on what was removed or withheld.
 */
export type SignedPage = { content: string; unsigned: UnsignedMedia[]; notes: string[] };

/**
 * Signs the media references of stored page MDX for a reader, found by parsing it (page_scan.ts), never
 * by pattern: each reference to a file of the site (filesOfSite: its library, and for a clone the host
 * files its copied content carried, decision 0610) is replaced by its delivery URL with a grant of `siteId` (`visitor`: absolute under
 * PUBLIC_BASE_URL; `member`: the media list's displayUrl form). Whatever the stored text says, no other
 * key is signed: a foreign key, a path in text or code, or a URL carrying another path stays as stored
 * (no grant) and is reported here and in the log. The content is sanitized first (mdx_sanitize.ts,
 * decision 0312); content that does not parse, or not within the parse budget, is withheld: readers get
 * "" and a note. Identity assets
 * (`avatars/`, `organization-logos/`) need no grant and stay as written. This check is independent of the
 * one at write time (page_media.ts): a row written by any other means is held to it too.
 */
export async function signPageMedia(
  ctx: Context,
  input: { siteId: string; pageId: string; content: string; grant: "visitor" | "member" },
): Promise<SignedPage> {
  const log = (unsigned: UnsignedMedia[], notes: string[]) => {
    if (unsigned.length > 0 || notes.length > 0)
      ctx.log.warn("page served with media unsigned or content removed", {
        siteId: input.siteId,
        pageId: input.pageId,
        unsigned: unsigned.length,
        first: unsigned.slice(0, 5),
        notes,
      });
  };
  // Content that cannot be parsed cannot be sanitized or signed: readers get none of it.
  const withheld = (why: string): SignedPage => {
    const notes = [`${why}: the page is served empty until its content is fixed`];
    log([], notes);
    return { content: "", unsigned: [], notes };
  };
  let scan: Awaited<ReturnType<typeof scanPage>>;
  try {
    scan = await scanPage(input.content, mediaRefBases(ctx.config));
  } catch (e) {
    if (!isScanFailure(e)) throw e;
    return withheld(`not parsed (${e.message})`);
  }
  if (!scan.ok) return withheld(`not valid MDX at line ${scan.line}, column ${scan.column} (${scan.reason})`);
  const content = scan.safeContent ?? input.content;
  const refs = scan.safeRefs ?? scan.refs;
  const notes =
    scan.removed > 0
      ? [
          `${scan.removed} construct(s) removed for readers: script-capable elements, expressions, ESM, event handlers or script URLs (decision 0312)`,
        ]
      : [];
  const owned = await filesOfSite(
    ctx,
    input.siteId,
    refs.filter((r) => !isPublicIdentityKey(r.key)).map((r) => r.key),
  );
  const unsigned: UnsignedMedia[] = scan.problems.map((p) => ({
    ref: p.ref,
    line: p.line,
    reason: p.message,
  }));
  if (scan.refCount > scan.refs.length)
    unsigned.push({
      ref: "",
      line: 1,
      reason: `${scan.refCount - scan.refs.length} references beyond ${MAX_PAGE_MEDIA_REFS}: not signed`,
    });
  const signed = new Map<string, string>();
  const parts: string[] = [];
  let at = 0;
  for (const r of refs) {
    if (isPublicIdentityKey(r.key)) continue;
    if (!owned.has(r.key)) {
      unsigned.push({ ref: r.url, line: r.line, reason: "not a file of this site: not signed" });
      continue;
    }
    let url = signed.get(r.key);
    if (url === undefined) {
      url =
        input.grant === "visitor"
          ? `${ctx.config.publicBaseUrl}${grantVisitorUrl(ctx, input.siteId, r.key)}`
          : grantMemberUrl(ctx, input.siteId, r.key);
      signed.set(r.key, url);
    }
    parts.push(content.slice(at, r.start), url);
    at = r.end;
  }
  parts.push(content.slice(at));
  unsigned.sort((a, b) => a.line - b.line);
  log(unsigned, notes);
  return { content: parts.join(""), unsigned, notes };
}
