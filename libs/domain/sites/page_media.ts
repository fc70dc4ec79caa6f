import { sites } from "@site/db";
import {
  isScanFailure,
  MAX_PAGE_MEDIA_REFS,
  MAX_PROBLEMS,
  type PageMediaRef,
  type PageScan,
  scanFailureError,
  scanPage,
} from "@site/domain/content";
import { AppError, type Context } from "@site/domain/core";
import { filesOfSite, type MediaContext, mediaRefBases, settleUploads } from "@site/domain/media";
import { eq } from "drizzle-orm";

/** What a page write learned about its media references. */
export type PageMediaCheck = { warnings: string[] };

const tenants = new Map<string, string>();
/** The organization of a site (it never changes: remembered, at most 10,000 sites). */
async function tenantOf(ctx: Context, siteId: string): Promise<string> {
  const known = tenants.get(siteId);
  if (known) return known;
  const [site] = await ctx.db.select({ orgId: sites.orgId }).from(sites).where(eq(sites.id, siteId)).limit(1);
  if (!site) return "";
  if (tenants.size >= 10_000) tenants.delete(tenants.keys().next().value!);
  tenants.set(siteId, site.orgId);
  return site.orgId;
}

/**
 * The media scan of page MDX written to `siteId`, parsed in its organization's share of the parser pool
 * (decision 0612): 429 RATE_LIMITED with Retry-After while that organization has its share of parses
 * waiting; 400 VALIDATION_ERROR naming line and column if it is not MDX, or if it ran past its CPU budget.
 */
export async function scanPageForWrite(
  ctx: Context,
  siteId: string,
  content: string,
): Promise<PageScan & { ok: true }> {
  let scan: PageScan;
  try {
    scan = await scanPage(content, mediaRefBases(ctx.config), {
      refuseWhenBusy: true,
      tenant: await tenantOf(ctx, siteId),
    });
  } catch (e) {
    if (isScanFailure(e)) throw scanFailureError(e);
    throw e;
  }
  if (!scan.ok) {
    const message = `not valid MDX at line ${scan.line}, column ${scan.column}: ${scan.reason}`;
    throw new AppError("VALIDATION_ERROR", `content: ${message}`, [
      { field: "content", line: scan.line, column: scan.column, message: scan.reason },
    ]);
  }
  return scan;
}

/**
 * Checks the media references of page MDX, found by parsing it in a worker (page_scan.ts: every URL of
 * every attribute, image, link and definition; a media path anywhere else is refused), against the
 * library: each must name a file of this site (filesOfSite: its library, and for a clone the host files
 * its copied content carried), by its canonical url (never a displayUrl with a grant,
 * never an outside URL); otherwise 400 VALIDATION_ERROR listing each bad reference and why. A bare Media
 * outside Column > Column passes with a warning that the visual editor cannot edit it.
 */
export async function checkPageMedia(ctx: Context, siteId: string, content: string): Promise<PageMediaCheck> {
  const scan = await scanPageForWrite(ctx, siteId, content);
  const problems = scan.problems.map((p) => ({ ref: p.ref, line: p.line, reason: p.message }));
  let problemCount = scan.problemCount;
  if (scan.refCount > MAX_PAGE_MEDIA_REFS) {
    throw new AppError(
      "VALIDATION_ERROR",
      `content: ${scan.refCount} media references; a page may hold at most ${MAX_PAGE_MEDIA_REFS}`,
      [{ field: "content", message: `at most ${MAX_PAGE_MEDIA_REFS} media references` }],
    );
  }
  const wanted = new Map<string, PageMediaRef[]>();
  for (const r of scan.refs) wanted.set(r.key, [...(wanted.get(r.key) ?? []), r]);
  if (wanted.size > 0) {
    // Uploads that went straight to object storage become files once settled.
    const store = (ctx as Partial<MediaContext>).store;
    if (store) await settleUploads({ ...ctx, store }, [...wanted.keys()]);
    const known = await filesOfSite(ctx, siteId, wanted.keys());
    for (const [key, rs] of wanted) {
      if (known.has(key)) continue;
      for (const r of rs) {
        problemCount++;
        if (problems.length < MAX_PROBLEMS)
          problems.push({
            ref: r.url,
            line: r.line,
            reason: "unknown file: not in this site's media library",
          });
      }
    }
  }
  if (problemCount > 0) {
    problems.sort((a, b) => a.line - b.line);
    const more = problemCount - problems.length;
    throw new AppError(
      "VALIDATION_ERROR",
      `content: ${problemCount} media reference(s) do not name files of this site's library${more > 0 ? ` (the first ${problems.length} are listed)` : ""}; list the library (GET …/media) and use an image's url`,
      problems.map((p) => ({ field: "content", ref: p.ref, line: p.line, message: p.reason })),
    );
  }
  const warnings = scan.bareMedia.map(
    (b) =>
      `line ${b.line}: Media${b.src ? ` (${b.src})` : ""} is not inside Column > Column; it renders, but the visual editor cannot edit it`,
  );
  if (scan.bareCount > scan.bareMedia.length)
    warnings.push(
      `${scan.bareCount - scan.bareMedia.length} more Media elements are not inside Column > Column`,
    );
  return { warnings };
}
