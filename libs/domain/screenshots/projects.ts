import { createHash } from "node:crypto";
import { screenshotProjects, type Tx } from "@site/db";
import type { Context } from "@site/domain/core";
import { eq, sql } from "drizzle-orm";
import { type CaptureExtras, type CaptureOptions, captureExtras, DEFAULT_CAPTURE } from "./options.ts";

/** A theme a page is filmed in. */
export type Variant = "light" | "dark";

/** A stored capture of a project: the PNG lives in the object store under a non-listed key. */
export type StoredCapture = {
  key: string;
  settingsHash: string;
  width: number;
  height: number;
  finalUrl: string;
  warnings: string[];
  filmedAt: string;
};

/** A project's captured variants, and which one was captured first. */
export type ProjectVariants = { light?: StoredCapture; dark?: StoredCapture; first?: Variant };

/** A screenshot project as the daemon reads it. */
export type ScreenshotProject = CaptureOptions & {
  id: string;
  siteId: string;
  sourceUrl: string;
  variants: ProjectVariants;
};

/** A short hash of what filming depends on: a variant filmed with other settings is filmed again. */
export function captureSettingsHash(url: string, c: CaptureOptions): string {
  const x = captureExtras(c);
  const text = JSON.stringify([
    url,
    c.viewportWidth,
    c.viewportHeight,
    c.deviceScaleFactor,
    c.fullPage,
    x.hideSelectors,
    x.waitForSelector,
    x.delayMs,
    x.blockAds,
    x.hideCookieBanners,
  ]);
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** The object-store key of a capture (under `captures/`, never listed in a library). */
export function captureKey(projectId: string, variant: Variant, hash: string): string {
  return `captures/${projectId}/${variant}-${hash}.png`;
}

/**
 * Finds or creates the project of (site, normalized URL); the capture settings a request names update
 * it, the others keep their stored values. Returns the project's effective settings.
 */
export async function upsertScreenshotProject(
  tx: Tx,
  input: { siteId: string; sourceUrl: string; capture: Partial<CaptureOptions> },
): Promise<{ id: string } & CaptureOptions> {
  const c = input.capture;
  const set: Record<string, unknown> = { updatedAt: sql`now()` };
  if (c.viewportWidth !== undefined) set.viewportWidth = c.viewportWidth;
  if (c.viewportHeight !== undefined) set.viewportHeight = c.viewportHeight;
  if (c.deviceScaleFactor !== undefined) set.deviceScaleFactor = c.deviceScaleFactor;
  if (c.fullPage !== undefined) set.fullPage = c.fullPage;
  const named: Partial<CaptureExtras> = {};
  for (const k of ["hideSelectors", "waitForSelector", "delayMs", "blockAds", "hideCookieBanners"] as const)
    if (c[k] !== undefined) (named as Record<string, unknown>)[k] = c[k];
  // the extras a request names replace those keys; the others keep their stored values
  set.captureOptions = sql`${screenshotProjects.captureOptions} || ${JSON.stringify(named)}::jsonb`;
  const [row] = await tx
    .insert(screenshotProjects)
    .values({
      siteId: input.siteId,
      sourceUrl: input.sourceUrl,
      viewportWidth: c.viewportWidth ?? DEFAULT_CAPTURE.viewportWidth,
      viewportHeight: c.viewportHeight ?? DEFAULT_CAPTURE.viewportHeight,
      deviceScaleFactor: c.deviceScaleFactor ?? DEFAULT_CAPTURE.deviceScaleFactor,
      fullPage: c.fullPage ?? DEFAULT_CAPTURE.fullPage,
      captureOptions: named,
    })
    .onConflictDoUpdate({ target: [screenshotProjects.siteId, screenshotProjects.sourceUrl], set })
    .returning();
  return {
    id: row.id,
    viewportWidth: row.viewportWidth,
    viewportHeight: row.viewportHeight,
    deviceScaleFactor: row.deviceScaleFactor,
    fullPage: row.fullPage,
    ...captureExtras(row.captureOptions),
  };
}

/** A project by id, or null. */
export async function getScreenshotProject(ctx: Context, id: string): Promise<ScreenshotProject | null> {
  const [row] = await ctx.db.select().from(screenshotProjects).where(eq(screenshotProjects.id, id)).limit(1);
  if (!row) return null;
  return {
    id: row.id,
    siteId: row.siteId,
    sourceUrl: row.sourceUrl,
    viewportWidth: row.viewportWidth,
    viewportHeight: row.viewportHeight,
    deviceScaleFactor: row.deviceScaleFactor,
    fullPage: row.fullPage,
    ...captureExtras(row.captureOptions),
    variants: (row.variants ?? {}) as ProjectVariants,
  };
}

/** Records a filmed variant on its project (atomically; the first variant ever filmed is remembered). */
export async function saveProjectVariant(
  ctx: Context,
  projectId: string,
  variant: Variant,
  capture: StoredCapture,
): Promise<void> {
  const patch = JSON.stringify({ [variant]: capture });
  await ctx.db
    .update(screenshotProjects)
    .set({
      variants: sql`${screenshotProjects.variants} || ${patch}::jsonb || case when ${screenshotProjects.variants} ? 'first' then '{}'::jsonb else jsonb_build_object('first', ${variant}::text) end`,
      updatedAt: sql`now()`,
    })
    .where(eq(screenshotProjects.id, projectId));
}
