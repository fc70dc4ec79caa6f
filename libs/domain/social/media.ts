import { randomBytes } from "node:crypto";
import { mediaFiles, sites, socialMedia, socialPosts, type Tx } from "@site/db";
import {
  AppError,
  andOlderThan,
  type Context,
  isUuid,
  keysetPage,
  type ListQuery,
  notFound,
  PAGE_LIMIT,
  type Principal,
  validationError,
} from "@site/domain/core";
import {
  chargeOrgStorage,
  grantMemberUrl,
  grantOrgMemberUrl,
  IMAGE_TYPES,
  isImageType,
  isoMillis,
  landPreparedUpload,
  lockOrg,
  type MediaContext,
  mediaPath,
  mintShareToken,
  parseMediaRef,
  pendingOrgUploadBytes,
  pixelRefusal,
  receiveSignedBytes,
  releaseOrgStorage,
  type SignedPutRequest,
  SNIFF_BYTES,
  signUpload,
  siteOfKey,
  sniffImage,
  sniffMedia,
  storageQuotaError,
  UPLOAD_URL_SECONDS,
} from "@site/domain/media";
import { isStoreDown, MAX_MEDIA_BYTES } from "@site/storage";
import { and, eq, gt, inArray, isNull, ne, sql } from "drizzle-orm";
import { ConvertError, convertMemoryBytes, convertToJpeg } from "./jpeg_convert.ts";
import type { RegisterSocialMediaBody, SocialMediaView, SocialUploadBody } from "./models.ts";
import type { PublishMedia } from "./platform.ts";
import { clipPosterKey, videoPoster } from "./video_poster.ts";

// The social media library: an organization's images and videos for posts. It reuses the site library's
// mechanics (signed uploads, magic-byte checks, the organization's storage quota, grants and share
// tokens); its files live under `social-media/<org_id>/` and are never world-readable.

type Row = typeof socialMedia.$inferSelect;

/** The storage key of an organization's own social file. */
export function socialKey(orgId: string, name: string): string {
  return `social-media/${orgId}/${name}`;
}

function fileName(contentType: string, baseName?: string): string {
  const ext = contentType === "video/mp4" ? "mp4" : IMAGE_TYPES[contentType as keyof typeof IMAGE_TYPES];
  const stem = (baseName ?? "")
    .replace(/\.[A-Za-z0-9]{1,5}$/, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return `${stem ? `${stem}-` : ""}${Date.now().toString(36)}${randomBytes(6).toString("hex")}.${ext}`;
}

/** The largest file of `contentType` the social library takes, or null for a type it refuses. */
export function maxSocialBytes(ctx: Context, contentType: string): number | null {
  if (isImageType(contentType)) return MAX_MEDIA_BYTES;
  if (contentType === "video/mp4") return ctx.config.social.videoMaxBytes;
  return null;
}

/** A file as the API answers it: `thumbnailUrl` signed now for the caller (a member of its organization). */
export function socialMediaView(ctx: Context, r: Row, createdUtc?: string): SocialMediaView {
  const site = siteOfKey(r.key);
  return {
    id: r.id,
    kind: r.kind,
    contentType: r.contentType,
    size: r.size,
    width: r.width,
    height: r.height,
    url: mediaPath(r.key),
    thumbnailUrl: site ? grantMemberUrl(ctx, site, r.key) : grantOrgMemberUrl(ctx, r.orgId, r.key),
    createdAt: createdUtc ? isoMillis(createdUtc) : r.createdAt.toISOString(),
  };
}

/** Bytes of the organization's prepared social uploads that may still land. */
async function pendingSocialBytes(ctx: Context, tx: Tx, orgId: string): Promise<number> {
  const [row] = await tx
    .select({ bytes: sql<number>`coalesce(sum(${socialMedia.size}), 0)::bigint` })
    .from(socialMedia)
    .where(
      and(
        eq(socialMedia.orgId, orgId),
        eq(socialMedia.status, "prepared"),
        gt(socialMedia.expiresAt, ctx.clock.now()),
      ),
    );
  return Number(row?.bytes ?? 0);
}

/**
 * Prepares a signed upload into the social library: the type (JPEG, PNG, WebP, GIF up to 10485760
 * bytes, MP4 up to SOCIAL_VIDEO_MAX_BYTES) and the storage quota (with the uploads still pending)
 * checked now; the file is listed once its bytes land and their magic bytes are the declared type.
 */
export async function prepareSocialUpload(ctx: MediaContext, principal: Principal, input: SocialUploadBody) {
  const contentType = input.contentType.trim().toLowerCase();
  const max = maxSocialBytes(ctx, contentType);
  if (max === null)
    throw new AppError(
      "VALIDATION_ERROR",
      "contentType: one of image/jpeg, image/png, image/webp, image/gif, video/mp4 (SVG is refused)",
      [{ field: "contentType", message: "unsupported type" }],
    );
  if (!Number.isSafeInteger(input.size) || input.size < 1 || input.size > max)
    throw new AppError("VALIDATION_ERROR", `size: an integer from 1 to ${max} for ${contentType}`, [
      { field: "size", message: `at most ${max} bytes` },
    ]);
  const key = socialKey(principal.orgId, fileName(contentType, input.name));
  const expiresAt = new Date(ctx.clock.now().getTime() + UPLOAD_URL_SECONDS * 1000);
  const row = await ctx.db.transaction(async (tx) => {
    const org = await lockOrg(tx, principal.orgId);
    const pending =
      (await pendingOrgUploadBytes(ctx, tx, principal.orgId)) +
      (await pendingSocialBytes(ctx, tx, principal.orgId));
    if (org.used + pending + input.size > org.quota) throw storageQuotaError(org.quota);
    const [r] = await tx
      .insert(socialMedia)
      .values({
        orgId: principal.orgId,
        key,
        kind: contentType === "video/mp4" ? "video" : "image",
        contentType,
        size: input.size,
        source: "upload",
        status: "prepared",
        expiresAt,
        createdAt: ctx.clock.now(),
      })
      .returning();
    return r!;
  });
  return {
    media: socialMediaView(ctx, row),
    upload: await signUpload(ctx, key, { contentType, size: input.size }),
  };
}

/**
 * Lands a prepared social upload whose bytes arrived: the signed size, the declared type by magic bytes,
 * and the storage quota in the same transaction as the row turning `ready`; anything else deletes the
 * bytes and never lists them. Returns the error when it refused; null when landed or not arrived yet.
 */
export function finalizeSocialUpload(ctx: MediaContext, row: Row): Promise<AppError | null> {
  return landPreparedUpload(ctx, {
    table: socialMedia,
    id: row.id,
    key: row.key,
    size: row.size,
    contentType: row.contentType,
    sniff: sniffMedia,
    wrongType: () =>
      new AppError("VALIDATION_ERROR", `file: the bytes are not ${row.contentType}`, [
        { field: "file", message: "the bytes are not the declared type" },
      ]),
    rejectedLog: "social upload rejected",
    land: async (tx, head, sniffed) => {
      await chargeOrgStorage(tx, await lockOrg(tx, row.orgId), head.size);
      await tx
        .update(socialMedia)
        .set({ status: "ready", width: sniffed.width, height: sniffed.height, expiresAt: null })
        .where(eq(socialMedia.id, row.id));
    },
  });
}

/** The signed PUT of a social upload served by the API itself (local-disk storage), then landing it. */
export async function receiveSocialUpload(ctx: MediaContext, key: string, request: SignedPutRequest) {
  const [row] = await ctx.db.select().from(socialMedia).where(eq(socialMedia.key, key)).limit(1);
  if (row?.status !== "prepared")
    throw new AppError("FORBIDDEN", "this upload URL is not valid (unknown, used or expired)");
  await receiveSignedBytes(ctx, key, request);
  const failed = await finalizeSocialUpload(ctx, row);
  if (failed) throw failed;
  return { url: mediaPath(key), id: row.id };
}

/** Lands the organization's prepared uploads whose bytes arrived straight in object storage (S3). */
async function settleSocialUploads(ctx: MediaContext, orgId: string): Promise<void> {
  const rows = await ctx.db
    .select()
    .from(socialMedia)
    .where(
      and(
        eq(socialMedia.orgId, orgId),
        eq(socialMedia.status, "prepared"),
        gt(socialMedia.expiresAt, ctx.clock.now()),
      ),
    )
    .limit(50);
  for (const r of rows)
    await finalizeSocialUpload(ctx, r).catch((err) => {
      if (!isStoreDown(err)) throw err;
    });
}

/** The organization's social library, newest first, by keyset cursor; each `thumbnailUrl` signed now. */
export async function listSocialMedia(ctx: MediaContext, principal: Principal, query: ListQuery) {
  await settleSocialUploads(ctx, principal.orgId);
  const limit = query.limit ?? PAGE_LIMIT.default;
  const rows = [
    ...(await ctx.db.execute<Row & { utc: string }>(sql`select m.id, m.org_id as "orgId", m.key, m.kind,
        m.content_type as "contentType", m.size::int as size, m.width, m.height,
        (m.created_at at time zone 'UTC')::text as utc
      from social_media m where m.org_id = ${principal.orgId}::uuid and m.status = 'ready' and m.source <> 'derived'
      ${andOlderThan(sql`m.created_at`, sql`m.id`, query.cursor)}
      order by m.created_at desc, m.id desc limit ${limit + 1}`)),
  ];
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: `${r.utc}+00`, id: r.id }));
  return { media: page.map((r) => socialMediaView(ctx, r, r.utc)), nextCursor };
}

/** The organization's listed files: landed (`ready`), not the hidden JPEGs made for platforms. */
function listedOf(orgId: string) {
  return and(
    eq(socialMedia.orgId, orgId),
    eq(socialMedia.status, "ready"),
    ne(socialMedia.source, "derived"),
  );
}

/** The storage key of the JPEG made once from a file for platforms that take JPEG only (jpegVariant). */
function jpegVariantKey(orgId: string, mediaId: string): string {
  return socialKey(orgId, `jpeg-of-${mediaId}.jpg`);
}

/**
 * Deletes a file of the organization's social library (decision 1300): its row, and the bytes the
 * social library stored and counted (its own upload, generated image or clip, the JPEG made from it for
 * JPEG-only platforms, and a clip's poster frame), their size given back to the storage quota. A registered site file keeps its
 * bytes (the site library's, counted by it). 404 NOT_FOUND for an id that is not a listed file of the
 * organization; 409 CONFLICT while a post not yet published lists it (a published post's file may go:
 * the platforms hold their own copies). The bytes are deleted before the rows commit, so a store that
 * is down (503) changes nothing and the call can be repeated.
 */
export async function deleteSocialMedia(ctx: MediaContext, principal: Principal, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("media file");
  const orgId = principal.orgId;
  await ctx.db.transaction(async (tx) => {
    const org = await lockOrg(tx, orgId);
    const [row] = await tx
      .select()
      .from(socialMedia)
      .where(and(eq(socialMedia.id, id), listedOf(orgId)))
      .for("update");
    if (!row) throw notFound("media file");
    const waiting = await tx
      .select({ id: socialPosts.id })
      .from(socialPosts)
      .where(
        and(
          eq(socialPosts.orgId, orgId),
          isNull(socialPosts.publishedAt),
          sql`${id}::uuid = any(${socialPosts.media})`,
        ),
      )
      .limit(20);
    if (waiting.length > 0)
      throw new AppError(
        "CONFLICT",
        `media file ${id} is used by a post not published yet (${waiting.map((p) => p.id).join(", ")}); delete it once the post is published`,
        { posts: waiting.map((p) => p.id) },
      );
    // Its hidden companions: the JPEG made for JPEG-only platforms, and a clip's poster frame.
    const poster = row.kind === "video" && row.source !== "site" ? clipPosterKey(row.key) : null;
    const derived = await tx
      .select()
      .from(socialMedia)
      .where(
        and(
          eq(socialMedia.orgId, orgId),
          eq(socialMedia.source, "derived"),
          inArray(socialMedia.key, [jpegVariantKey(orgId, id), ...(poster ? [poster] : [])]),
        ),
      )
      .for("update");
    const stored = [...(row.source === "site" ? [] : [row]), ...derived];
    await tx.delete(socialMedia).where(
      inArray(
        socialMedia.id,
        [row, ...derived].map((r) => r.id),
      ),
    );
    const bytes = stored.filter((r) => r.status === "ready").reduce((n, r) => n + r.size, 0);
    if (bytes > 0) await releaseOrgStorage(tx, org, bytes);
    for (const r of stored) await ctx.store.delete(r.key);
  });
}

/** The size an image in the store declares in its first SNIFF_BYTES; null when it names none. */
async function storedHeaderSize(ctx: MediaContext, key: string) {
  const got = await ctx.store.get(key, { range: { start: 0, end: SNIFF_BYTES - 1 } });
  return got ? sniffImage(new Uint8Array(await new Response(got.body).arrayBuffer())) : null;
}

/**
 * Registers a site library file of the organization (by its `/api/media/<key>` path) in the social
 * library, without copying it (its bytes stay counted once, by the site). Registering it again answers
 * the same entry. 400 for a path that is not a library file of one of the organization's sites (a
 * deleted site's files included: they are gone for good once its grace ends), and for an image over
 * MEDIA_MAX_PIXELS (one that landed before the limit).
 */
export async function registerSocialMedia(
  ctx: MediaContext,
  principal: Principal,
  input: RegisterSocialMediaBody,
): Promise<SocialMediaView> {
  const ref = parseMediaRef(ctx.config, input.url.trim());
  const site = ref.kind === "outside" ? null : siteOfKey(ref.key);
  const notOurs = validationError("url", "not a media file of a site of this organization");
  if (ref.kind === "outside" || !site) throw notOurs;
  const [file] = await ctx.db
    .select({ file: mediaFiles })
    .from(mediaFiles)
    .innerJoin(sites, eq(sites.id, mediaFiles.siteId))
    .where(and(eq(mediaFiles.key, ref.key), eq(sites.orgId, principal.orgId), isNull(sites.deletedAt)))
    .limit(1);
  if (!file) throw notOurs;
  const f = file.file;
  // Pixels before bytes: the row's size, or (a file landed before sizes were read) its header's.
  const size = f.width !== null && f.height !== null ? f : await storedHeaderSize(ctx, f.key);
  const tooBig = pixelRefusal(size, ctx.config.limits.mediaMaxPixels, "url");
  if (tooBig) throw tooBig;
  const [row] = await ctx.db
    .insert(socialMedia)
    .values({
      orgId: principal.orgId,
      key: f.key,
      kind: "image",
      contentType: f.contentType,
      size: f.size,
      width: f.width,
      height: f.height,
      source: "site",
      status: "ready",
      createdAt: ctx.clock.now(),
    })
    .onConflictDoUpdate({ target: [socialMedia.orgId, socialMedia.key], set: { status: "ready" } })
    .returning();
  return socialMediaView(ctx, row!);
}

/**
 * Adds bytes the service produced (a generated image) to the organization's social library: the type by
 * magic bytes (an accepted image), the storage quota counted in the transaction that lists it.
 */
export async function addSocialFile(
  ctx: MediaContext,
  orgId: string,
  bytes: Uint8Array,
  source: "generated",
): Promise<SocialMediaView> {
  const sniffed = sniffMedia(bytes);
  if (sniffed?.kind !== "image" || bytes.byteLength > MAX_MEDIA_BYTES)
    throw new AppError(
      "RENDERER_ERROR",
      "the image provider answered something that is not an accepted image",
    );
  if (pixelRefusal(sniffed, ctx.config.limits.mediaMaxPixels))
    throw new AppError("RENDERER_ERROR", "the image provider answered an image over MEDIA_MAX_PIXELS");
  const key = socialKey(orgId, fileName(sniffed.contentType, source));
  await ctx.store.put(key, bytes, { contentType: sniffed.contentType });
  try {
    const row = await ctx.db.transaction(async (tx) => {
      await chargeOrgStorage(tx, await lockOrg(tx, orgId), bytes.byteLength);
      const [r] = await tx
        .insert(socialMedia)
        .values({
          orgId,
          key,
          kind: "image",
          contentType: sniffed.contentType,
          size: bytes.byteLength,
          width: sniffed.width,
          height: sniffed.height,
          source,
          status: "ready",
          createdAt: ctx.clock.now(),
        })
        .returning();
      return r!;
    });
    return socialMediaView(ctx, row);
  } catch (err) {
    await ctx.store.delete(key).catch(() => {});
    throw err;
  }
}

/**
 * The post's media as the adapters need them, in the order given: each a share-token URL on
 * PUBLIC_BASE_URL valid SOCIAL_SHARE_TOKEN_SECONDS (long enough for the platform to fetch it, never for
 * good), and its bytes on demand. 400 VALIDATION_ERROR naming the ids that are not ready files of the
 * organization.
 */
export async function loadPublishMedia(
  ctx: MediaContext,
  orgId: string,
  ids: string[],
): Promise<(PublishMedia & { id: string })[]> {
  if (ids.length === 0) return [];
  const bad = ids.filter((id) => !isUuid(id));
  if (bad.length > 0) throw validationError("media", `not media ids: ${bad.join(", ")}`);
  await settleSocialUploads(ctx, orgId);
  const rows = await ctx.db
    .select()
    .from(socialMedia)
    .where(and(inArray(socialMedia.id, ids), listedOf(orgId)));
  const missing = ids.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length > 0)
    throw validationError("media", `not files of this organization's social library: ${missing.join(", ")}`);
  return ids.map((id) => publishMediaOf(ctx, rows.find((x) => x.id === id)!));
}

/** A library row as an adapter takes it: a share-token URL valid SOCIAL_SHARE_TOKEN_SECONDS, its bytes on demand. */
function publishMediaOf(ctx: MediaContext, r: Row): PublishMedia & { id: string } {
  const ttl = ctx.config.social.shareTokenSeconds;
  const t = mintShareToken(ctx, { siteId: siteOfKey(r.key) ?? r.orgId, key: r.key, ttlSeconds: ttl });
  return {
    id: r.id,
    kind: r.kind,
    contentType: r.contentType,
    size: r.size,
    url: `${ctx.config.publicBaseUrl}${mediaPath(r.key)}?t=${t}`,
    read: async () => {
      const got = await ctx.store.get(r.key);
      if (!got) throw notFound("media file");
      return new Uint8Array(await new Response(got.body).arrayBuffer());
    },
    ...(r.kind === "video" ? { poster: videoPoster(ctx, r) } : {}),
  };
}

/**
 * The JPEG of a still image (PNG, WebP) for a platform that takes JPEG only: its header's size checked
 * against MEDIA_MAX_PIXELS (400 VALIDATION_ERROR over it), then decoded and re-encoded with
 * @napi-rs/canvas in a child process under a memory limit (jpeg_convert.ts; quality 90, transparency over white), stored once per file as a hidden `derived`
 * file of the library (counted against the quota) and reused by later posts. 400 VALIDATION_ERROR when
 * the bytes cannot be decoded.
 */
export async function jpegVariant(
  ctx: MediaContext,
  orgId: string,
  media: PublishMedia & { id: string },
): Promise<PublishMedia & { id: string }> {
  const key = jpegVariantKey(orgId, media.id);
  const existing = async () =>
    (
      await ctx.db
        .select()
        .from(socialMedia)
        .where(and(eq(socialMedia.orgId, orgId), eq(socialMedia.key, key), eq(socialMedia.status, "ready")))
    )[0];
  const found = await existing();
  if (found) return publishMediaOf(ctx, found);
  const bytes = await media.read();
  // Pixels before bytes: the header's size decides before anything decodes (a file that landed before
  // MEDIA_MAX_PIXELS, or whose header the landing did not read).
  const tooBig = pixelRefusal(sniffImage(bytes), ctx.config.limits.mediaMaxPixels, "media", media.id);
  if (tooBig) throw tooBig;
  const max = ctx.config.limits.mediaMaxPixels;
  let converted: Awaited<ReturnType<typeof convertToJpeg>>;
  try {
    converted = await convertToJpeg(bytes, { memoryBytes: convertMemoryBytes(max) });
  } catch (err) {
    if (!(err instanceof ConvertError)) throw err;
    ctx.log.warn("jpeg conversion failed", { mediaId: media.id, cause: err.message });
    throw validationError(
      "media",
      `${media.id}: a ${media.contentType} that cannot be decoded to convert it to JPEG`,
    );
  }
  const { jpeg, width, height } = converted;
  await ctx.store.put(key, jpeg, { contentType: "image/jpeg" });
  try {
    await ctx.db.transaction(async (tx) => {
      await chargeOrgStorage(tx, await lockOrg(tx, orgId), jpeg.byteLength);
      await tx.insert(socialMedia).values({
        orgId,
        key,
        kind: "image",
        contentType: "image/jpeg",
        size: jpeg.byteLength,
        width,
        height,
        source: "derived",
        status: "ready",
        createdAt: ctx.clock.now(),
      });
    });
  } catch (err) {
    // A concurrent post made the same variant: use it (its bytes are the same).
    const raced = await existing();
    if (raced) return publishMediaOf(ctx, raced);
    await ctx.store.delete(key).catch(() => {});
    throw err;
  }
  return publishMediaOf(ctx, (await existing())!);
}
