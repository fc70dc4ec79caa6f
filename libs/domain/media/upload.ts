import { mediaFiles, mediaUploads } from "@site/db";
import { AppError, notFound, type OwnedSite, type SignedUpload } from "@site/domain/core";
import { isStoreDown, MAX_MEDIA_BYTES, StoreError } from "@site/storage";
import { and, eq, inArray } from "drizzle-orm";
import { addedMediaFile } from "./embed.ts";
import { mediaPath } from "./grants.ts";
import { isImageType, sniffImage } from "./image_types.ts";
import { landPreparedUpload } from "./landing.ts";
import { generateMediaName, libraryKey, type MediaContext, notAnImage } from "./library.ts";
import { recordMediaCreated } from "./media_events.ts";
import type { AddedMediaFile, UploadBody, UploadPreparation } from "./models.ts";
import {
  countLanding,
  countRecentEvents,
  lockSiteOrg,
  pendingUploads,
  secondsUntilSlotFrees,
  storageQuotaError,
  uploadCapError,
} from "./quota.ts";

/** How long a signed upload URL stays valid (the spec's 7200 s). */
export const UPLOAD_URL_SECONDS = 7200;

/** Prepares a signed upload: checks type, size, the daily cap and the storage quota, then signs a PUT. */
export async function prepareUpload(
  ctx: MediaContext,
  site: OwnedSite,
  input: UploadBody,
): Promise<UploadPreparation> {
  const siteId = site.id;
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
    if (landed + pending.count >= cap) {
      // A prepared upload that never lands frees its slot when its URL expires, sooner than a day.
      const landedFrees = await secondsUntilSlotFrees(ctx, tx, siteId, "upload");
      throw uploadCapError(cap, pending.count > 0 ? Math.min(landedFrees, UPLOAD_URL_SECONDS) : landedFrees);
    }
    if (org.used + pending.bytes + input.size > org.quota) throw storageQuotaError(org.quota);
    await tx
      .insert(mediaUploads)
      .values({ siteId, key, name, contentType, size: input.size, expiresAt, createdAt: ctx.clock.now() });
  });
  return {
    upload: await signUpload(ctx, key, { contentType, size: input.size }),
    publicUrl: mediaPath(key),
    path: key,
    name,
    mediaType: "image",
    maxBytes: MAX_MEDIA_BYTES,
  };
}

type UploadRow = typeof mediaUploads.$inferSelect;

/**
 * Finalizes an upload whose bytes landed: the magic bytes must be the declared image type and the size
 * the signed one; the daily cap and the quota are counted in the same transaction as the library row.
 * Anything else deletes the bytes and never lists them. Returns the error when it rejected.
 */
export function finalizeUpload(ctx: MediaContext, upload: UploadRow): Promise<AppError | null> {
  return landPreparedUpload(ctx, {
    table: mediaUploads,
    id: upload.id,
    key: upload.key,
    size: upload.size,
    contentType: upload.contentType,
    sniff: sniffImage,
    wrongType: () => notAnImage(),
    rejectedLog: "upload rejected",
    land: async (tx, head, sniffed) => {
      await countLanding(ctx, tx, { siteId: upload.siteId, size: head.size, countsAsUpload: true });
      const [row] = await tx
        .insert(mediaFiles)
        .values({
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
        })
        .returning();
      // media.created commits with the file (the webhook outbox, decision 0840).
      if (row) await recordMediaCreated(ctx, tx, row);
      await tx.update(mediaUploads).set({ status: "landed" }).where(eq(mediaUploads.id, upload.id));
    },
  });
}

/**
 * Settles the prepared uploads among `keys` whose bytes landed (a page about to reference them, a read
 * of one of them): the uploads named, never a pass over a whole library.
 */
export async function settleUploads(ctx: MediaContext, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  const rows = await ctx.db
    .select()
    .from(mediaUploads)
    .where(and(inArray(mediaUploads.key, keys), eq(mediaUploads.status, "prepared")));
  for (const row of rows) await finalizeUpload(ctx, row);
}

/**
 * Signed-upload instructions (the `SignedUpload` model) for one PUT of exactly `file` to `key`, valid
 * UPLOAD_URL_SECONDS: the site library's and the social library's uploads alike.
 */
export async function signUpload(
  ctx: MediaContext,
  key: string,
  file: { contentType: string; size: number },
): Promise<SignedUpload> {
  const signed = await ctx.store.presignPut(key, { ...file, expiresInSeconds: UPLOAD_URL_SECONDS });
  return { ...signed, expiresInSeconds: UPLOAD_URL_SECONDS };
}

/** A signed PUT the API serves itself (local disk): its query (the signature), content type and body. */
export type SignedPutRequest = {
  searchParams: URLSearchParams;
  contentType: string | null;
  body: ReadableStream<Uint8Array> | null;
};

/** Receives the bytes of a signed PUT served by the API itself (local disk), then finalizes the upload. */
export async function receiveSignedUpload(ctx: MediaContext, key: string, request: SignedPutRequest) {
  if (!ctx.store.receiveSignedPut) throw notFound("upload route");
  const [upload] = await ctx.db.select().from(mediaUploads).where(eq(mediaUploads.key, key)).limit(1);
  const invalid = new AppError("FORBIDDEN", "this upload URL is not valid (unknown, used or expired)");
  if (!upload) throw invalid;
  if (upload.status !== "prepared") throw invalid;
  await receiveSignedBytes(ctx, key, request);
  const failed = await finalizeUpload(ctx, upload);
  if (failed) throw failed;
  return { publicUrl: mediaPath(key), path: key, name: upload.name };
}

/**
 * Receives the bytes of a signed PUT served by the API itself into the store, bounded by
 * UPLOAD_TRANSFER_TIMEOUT_MS; a bad or expired signature is 403, a wrong type or size 400 (shared by the
 * site library and the social media library, each finalizing its own record after).
 */
export async function receiveSignedBytes(
  ctx: MediaContext,
  key: string,
  request: SignedPutRequest,
): Promise<void> {
  if (!ctx.store.receiveSignedPut) throw notFound("upload route");
  // A transfer is bounded (UPLOAD_TRANSFER_TIMEOUT_MS): its temporary file is never older than that.
  const limitMs = ctx.config.timeouts.uploadTransferMs;
  let timedOut = false;
  const body = request.body
    ? withDeadline(request.body, limitMs, () => {
        timedOut = true;
      })
    : null;
  try {
    await ctx.store.receiveSignedPut(key, { ...request, body });
  } catch (err) {
    if (timedOut)
      throw new AppError(
        "VALIDATION_ERROR",
        `body: the upload took longer than ${Math.round(limitMs / 1000)} s`,
        [{ field: "body", message: "too slow" }],
      );
    // A full or unreachable store is an outage (503), not the client's mistake.
    if (!(err instanceof StoreError) || isStoreDown(err)) throw err;
    if (err.reason === "bad_signature" || err.reason === "expired" || err.reason === "invalid_key")
      throw new AppError("FORBIDDEN", err.message);
    throw new AppError("VALIDATION_ERROR", err.message, [
      { field: err.reason === "bad_content_type" ? "Content-Type" : "body", message: err.message },
    ]);
  }
}

/** A stream that errors once `ms` have passed (the reader's write stops; its temporary file is removed). */
function withDeadline(
  body: ReadableStream<Uint8Array>,
  ms: number,
  onLate: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const deadline = Date.now() + ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const late = new Promise<"late">((r) => {
        timer = setTimeout(() => r("late"), Math.max(0, deadline - Date.now()));
      });
      const next = await Promise.race([reader.read(), late]);
      clearTimeout(timer);
      if (next === "late") {
        onLate();
        reader.cancel().catch(() => {});
        c.error(new Error("upload transfer deadline passed"));
      } else if (next.done) c.close();
      else c.enqueue(next.value);
    },
    cancel: (why) => reader.cancel(why),
  });
}

/** The outcome of a completion call: the library file once its bytes landed and passed the checks. */
export type CompletedUpload = AddedMediaFile;

/**
 * Completes a signed upload after the client's PUT (`POST …/media/upload/<name>/complete`): lands it
 * when its bytes arrived and pass the checks (the type by magic bytes, the signed size, the caps and
 * the quota), idempotently. 404 for an unknown upload of the site; 400 VALIDATION_ERROR when no bytes
 * arrived yet, when they were refused, or when the upload URL expired without them.
 */
export async function completeUpload(
  ctx: MediaContext,
  site: OwnedSite,
  name: string,
): Promise<CompletedUpload> {
  const siteId = site.id;
  const [upload] = await ctx.db
    .select()
    .from(mediaUploads)
    .where(eq(mediaUploads.key, libraryKey(siteId, name)))
    .limit(1);
  if (!upload) throw notFound("upload");
  if (upload.status === "prepared") {
    const failed = await finalizeUpload(ctx, upload);
    if (failed) throw failed;
  }
  const [file] = await ctx.db
    .select({ size: mediaFiles.size, alt: mediaFiles.alt })
    .from(mediaFiles)
    .where(eq(mediaFiles.key, upload.key))
    .limit(1);
  if (file) return addedMediaFile({ key: upload.key, name: upload.name, size: file.size }, file.alt);
  const [now] = await ctx.db
    .select({ status: mediaUploads.status, expiresAt: mediaUploads.expiresAt })
    .from(mediaUploads)
    .where(eq(mediaUploads.id, upload.id));
  const why =
    now?.status === "rejected"
      ? "the uploaded bytes were refused (not the declared image, the wrong size, or over a limit)"
      : now?.status === "expired" || (now && now.expiresAt <= ctx.clock.now())
        ? "the upload URL expired before any bytes arrived"
        : "no bytes have arrived at the upload URL yet; PUT them first";
  throw new AppError("VALIDATION_ERROR", `upload: ${why}`, [{ field: "upload", message: why }]);
}
