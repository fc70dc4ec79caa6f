import type { mediaUploads, socialMedia, Tx } from "@site/db";
import { AppError } from "@site/domain/core";
import type { ObjectInfo } from "@site/storage";
import { and, eq } from "drizzle-orm";
import { SNIFF_BYTES } from "./image_types.ts";
import type { MediaContext } from "./library.ts";
import { pixelRefusal } from "./pixels.ts";

/**
 * A prepared upload as landing sees it: its object and declared type, how its bytes are told apart, and
 * its own record (the site library's `media_uploads`, the social library's `social_media`), each counting
 * its bytes (quota, caps) its own way.
 */
export type PreparedUpload<S extends Sniffed> = {
  /** The table of the upload's record (its `status` starts `prepared`, a refusal turns it `rejected`). */
  table: typeof mediaUploads | typeof socialMedia;
  id: string;
  key: string;
  /** The signed size. */
  size: number;
  /** The declared type. */
  contentType: string;
  /** The type (and dimensions) the first bytes tell; null for none the library takes. */
  sniff: (prefix: Uint8Array) => S | null;
  /** The refusal of bytes that are not the declared type. */
  wrongType: () => AppError;
  /** Counts the bytes and lists the file, in the transaction that holds the record's lock. */
  land: (tx: Tx, head: ObjectInfo, sniffed: S) => Promise<void>;
  /** The log line of a refusal. */
  rejectedLog: string;
};

/** What the first bytes of an upload tell: its type, and for an image the size its header declares. */
type Sniffed = { contentType: string; kind?: "image" | "video"; width: number | null; height: number | null };

async function rejectUpload<S extends Sniffed>(
  ctx: MediaContext,
  upload: PreparedUpload<S>,
  why: AppError,
): Promise<AppError> {
  await ctx.store.delete(upload.key).catch(() => {});
  const t = upload.table;
  await ctx.db
    .update(t)
    .set({ status: "rejected" })
    .where(and(eq(t.id, upload.id), eq(t.status, "prepared")));
  ctx.log.info(upload.rejectedLog, { key: upload.key, reason: why.message });
  return why;
}

/**
 * Lands a prepared upload whose bytes arrived: the signed size, the declared type by magic bytes, an
 * image's declared pixels (MEDIA_MAX_PIXELS, read from its first SNIFF_BYTES, never decoded), and the
 * record's counting (quota, caps) in the same transaction as its listing; anything else deletes the bytes
 * and never lists them. Returns the error when it refused; null when landed or not arrived yet.
 */
export async function landPreparedUpload<S extends Sniffed>(
  ctx: MediaContext,
  upload: PreparedUpload<S>,
): Promise<AppError | null> {
  const head = await ctx.store.head(upload.key);
  if (!head) return null;
  if (head.size !== upload.size)
    return rejectUpload(
      ctx,
      upload,
      new AppError("VALIDATION_ERROR", `file: ${head.size} bytes sent, ${upload.size} signed`),
    );
  const got = await ctx.store.get(upload.key, {
    range: { start: 0, end: Math.min(head.size, SNIFF_BYTES) - 1 },
  });
  const prefix = got ? new Uint8Array(await new Response(got.body).arrayBuffer()) : new Uint8Array(0);
  const sniffed = upload.sniff(prefix);
  if (!sniffed || sniffed.contentType !== upload.contentType)
    return rejectUpload(ctx, upload, upload.wrongType());
  // Pixels before bytes: an image over MEDIA_MAX_PIXELS (as its header declares) lands as refused.
  const tooBig = sniffed.kind === "video" ? null : pixelRefusal(sniffed, ctx.config.limits.mediaMaxPixels);
  if (tooBig) return rejectUpload(ctx, upload, tooBig);
  try {
    await ctx.db.transaction(async (tx) => {
      const t = upload.table;
      // A concurrent landing of the same upload wins; this one does nothing.
      const [still] = await tx.select({ status: t.status }).from(t).where(eq(t.id, upload.id)).for("update");
      if (still?.status !== "prepared") return;
      await upload.land(tx, head, sniffed);
    });
  } catch (err) {
    if (err instanceof AppError) return rejectUpload(ctx, upload, err);
    throw err;
  }
  return null;
}
