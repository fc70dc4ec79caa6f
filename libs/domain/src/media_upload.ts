import { and, asc, eq, lte } from "drizzle-orm";
import { mediaFiles, mediaUploads } from "@site/db";
import { MAX_MEDIA_BYTES, StoreError } from "@site/storage";
import { AppError, notFound } from "./errors.ts";
import { mediaPath } from "./media_grants.ts";
import { libraryKey, type MediaContext, generateMediaName, notAnImage } from "./media_library.ts";
import {
  countLanding,
  countRecentEvents,
  lockSiteOrg,
  pendingUploads,
  storageQuotaError,
  uploadCapError,
} from "./media_quota.ts";
import { isImageType, SNIFF_BYTES, sniffImage } from "./media_types.ts";

/** How long a signed upload URL stays valid (the spec's 7200 s). */
export const UPLOAD_URL_SECONDS = 7200;

/** The spec's upload preparation result. */
export type UploadPreparation = {
  upload: { url: string; method: "PUT"; headers: Record<string, string>; expiresInSeconds: number };
  publicUrl: string;
  path: string;
  name: string;
  mediaType: "image";
  maxBytes: number;
};

/** Prepares a signed upload: checks type, size, the daily cap and the storage quota, then signs a PUT. */
export async function prepareUpload(
  ctx: MediaContext,
  siteId: string,
  input: { contentType: string; size: number },
): Promise<UploadPreparation> {
  const contentType = input.contentType.trim().toLowerCase();
  if (!isImageType(contentType)) {
    throw new AppError(
      "VALIDATION_ERROR",
      "contentType: one of image/jpeg, image/png, image/webp, image/gif (SVG is refused)",
      [{ field: "contentType", message: "unsupported image type" }],
    );
  }
  if (!Number.isSafeInteger(input.size) || input.size < 1 || input.size > MAX_MEDIA_BYTES) {
    throw new AppError("VALIDATION_ERROR", `size: an integer from 1 to ${MAX_MEDIA_BYTES}`, [
      { field: "size", message: `at most ${MAX_MEDIA_BYTES} bytes` },
    ]);
  }
  const name = generateMediaName(contentType);
  const key = libraryKey(siteId, name);
  const expiresAt = new Date(ctx.clock.now().getTime() + UPLOAD_URL_SECONDS * 1000);
  await ctx.db.transaction(async (tx) => {
    const org = await lockSiteOrg(tx, siteId);
    const pending = await pendingUploads(ctx, tx, siteId, org.orgId);
    const landed = await countRecentEvents(ctx, tx, siteId, "upload");
    const cap = ctx.config.limits.dailyUploads;
    if (landed + pending.count >= cap) throw uploadCapError(cap);
    if (org.used + pending.bytes + input.size > org.quota) throw storageQuotaError(org.quota);
    await tx
      .insert(mediaUploads)
      .values({ siteId, key, name, contentType, size: input.size, expiresAt, createdAt: ctx.clock.now() });
  });
  const signed = await ctx.store.presignPut(key, {
    contentType,
    size: input.size,
    expiresInSeconds: UPLOAD_URL_SECONDS,
  });
  return {
    upload: { ...signed, expiresInSeconds: UPLOAD_URL_SECONDS },
    publicUrl: mediaPath(key),
    path: key,
    name,
    mediaType: "image",
    maxBytes: MAX_MEDIA_BYTES,
  };
}

type UploadRow = typeof mediaUploads.$inferSelect;

async function reject(ctx: MediaContext, upload: UploadRow, why: AppError): Promise<AppError> {
  await ctx.store.delete(upload.key).catch(() => {});
  await ctx.db
    .update(mediaUploads)
    .set({ status: "rejected" })
    .where(and(eq(mediaUploads.id, upload.id), eq(mediaUploads.status, "prepared")));
  ctx.log.info("upload rejected", { key: upload.key, reason: why.message });
  return why;
}

/**
 * Finalizes an upload whose bytes landed: the magic bytes must be the declared image type and the size
 * the signed one; the daily cap and the quota are counted in the same transaction as the library row.
 * Anything else deletes the bytes and never lists them. Returns the error when it rejected.
 */
export async function finalizeUpload(ctx: MediaContext, upload: UploadRow): Promise<AppError | null> {
  const head = await ctx.store.head(upload.key);
  if (!head) return null;
  if (head.size !== upload.size) {
    return reject(
      ctx,
      upload,
      new AppError("VALIDATION_ERROR", `file: ${head.size} bytes sent, ${upload.size} signed`),
    );
  }
  const got = await ctx.store.get(upload.key, {
    range: { start: 0, end: Math.min(head.size, SNIFF_BYTES) - 1 },
  });
  const prefix = got ? new Uint8Array(await new Response(got.body).arrayBuffer()) : new Uint8Array(0);
  const sniffed = sniffImage(prefix);
  if (!sniffed || sniffed.contentType !== upload.contentType) return reject(ctx, upload, notAnImage());
  try {
    await ctx.db.transaction(async (tx) => {
      const [still] = await tx
        .select({ status: mediaUploads.status })
        .from(mediaUploads)
        .where(eq(mediaUploads.id, upload.id))
        .for("update");
      if (still?.status !== "prepared") return;
      await countLanding(ctx, tx, { siteId: upload.siteId, size: head.size, countsAsUpload: true });
      await tx.insert(mediaFiles).values({
        siteId: upload.siteId,
        key: upload.key,
        name: upload.name,
        contentType: upload.contentType,
        size: head.size,
        width: sniffed.width,
        height: sniffed.height,
        source: "upload",
        etag: head.etag,
        createdAt: ctx.clock.now(),
      });
      await tx.update(mediaUploads).set({ status: "landed" }).where(eq(mediaUploads.id, upload.id));
    });
  } catch (err) {
    if (err instanceof AppError) return reject(ctx, upload, err);
    throw err;
  }
  return null;
}

/**
 * Settles a site's prepared uploads whose bytes went straight to S3: lands those whose bytes arrived,
 * expires those whose URL lapsed without bytes. Called before the library is read.
 */
export async function settlePendingUploads(ctx: MediaContext, siteId: string, max = 25): Promise<void> {
  const rows = await ctx.db
    .select()
    .from(mediaUploads)
    .where(and(eq(mediaUploads.siteId, siteId), eq(mediaUploads.status, "prepared")))
    .orderBy(asc(mediaUploads.createdAt))
    .limit(max);
  for (const row of rows) {
    const landed = await ctx.store.head(row.key);
    if (landed) await finalizeUpload(ctx, row);
    else if (row.expiresAt <= ctx.clock.now())
      await ctx.db
        .update(mediaUploads)
        .set({ status: "expired" })
        .where(
          and(
            eq(mediaUploads.id, row.id),
            eq(mediaUploads.status, "prepared"),
            lte(mediaUploads.expiresAt, ctx.clock.now()),
          ),
        );
  }
}

/** Receives the bytes of a signed PUT served by the API itself (local disk), then finalizes the upload. */
export async function receiveSignedUpload(
  ctx: MediaContext,
  key: string,
  request: {
    searchParams: URLSearchParams;
    contentType: string | null;
    body: ReadableStream<Uint8Array> | null;
  },
) {
  if (!ctx.store.receiveSignedPut) throw notFound("upload route");
  const [upload] = await ctx.db.select().from(mediaUploads).where(eq(mediaUploads.key, key)).limit(1);
  const invalid = new AppError("FORBIDDEN", "this upload URL is not valid (unknown, used or expired)");
  if (!upload) throw invalid;
  if (upload.status !== "prepared") throw invalid;
  try {
    await ctx.store.receiveSignedPut(key, request);
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    if (err.reason === "bad_signature" || err.reason === "expired" || err.reason === "invalid_key")
      throw new AppError("FORBIDDEN", err.message);
    throw new AppError("VALIDATION_ERROR", err.message, [
      { field: err.reason === "bad_content_type" ? "Content-Type" : "body", message: err.message },
    ]);
  }
  const failed = await finalizeUpload(ctx, upload);
  if (failed) throw failed;
  return { publicUrl: mediaPath(key), path: key, name: upload.name };
}
