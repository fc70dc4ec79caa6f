import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { isUniqueViolation, mediaFiles } from "@site/db";
import { MAX_MEDIA_BYTES, type ObjectStore } from "@site/storage";
import {
  andOlderThan,
  type Context,
  AppError,
  isUuid,
  keysetPage,
  type ListQuery,
  notFound,
  PAGE_LIMIT,
} from "@site/domain/core";
import { grantMemberUrl, mediaPath } from "./grants.ts";
import type { MediaImage } from "./models.ts";
import { countLanding, type ImportReservation } from "./quota.ts";
import { IMAGE_TYPES, type ImageType, type SniffedImage, sniffImage } from "./image_types.ts";

/** What media functions use: the context plus the object store. */
export type MediaContext = Context & { store: ObjectStore };

/** How a file entered the library. */
export type MediaSource = "upload" | "import" | "screenshot" | "preview";

/** A file of the library as addLibraryFile returns it; `url` is the canonical `/api/media/<key>` path. */
export type LibraryEntry = {
  key: string;
  name: string;
  url: string;
  size: number;
  width: number | null;
  height: number | null;
  contentType: string;
};

/** The storage key of a library file: `site-media/<site_id>/<name>`. */
export function libraryKey(siteId: string, name: string): string {
  return `site-media/${siteId}/${name}`;
}

/** A collision-free file name with the type's extension, led by a cleaned `baseName` when given. */
export function generateMediaName(contentType: ImageType, baseName?: string): string {
  const stem = (baseName ?? "")
    .replace(/\.[A-Za-z0-9]{1,5}$/, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  const unique = `${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;
  return `${stem ? `${stem}-` : ""}${unique}.${IMAGE_TYPES[contentType]}`;
}

/** 400 VALIDATION_ERROR for bytes that are not one of the accepted image types. */
export function notAnImage(field = "file"): AppError {
  return new AppError("VALIDATION_ERROR", `${field}: not a JPEG, PNG, WebP or GIF image (SVG is refused)`, [
    { field, message: "unsupported image type" },
  ]);
}

/** Adds a file's bytes to a site's library: sniffs the type by magic bytes (JPEG/PNG/WebP/GIF only, else 400 VALIDATION_ERROR), reads width/height, checks and counts the org storage quota (403 FORBIDDEN) in the same transaction as the row, writes to the store, inserts media_files, returns the library entry. */
export async function addLibraryFile(
  ctx: MediaContext,
  input: {
    siteId: string;
    bytes: Uint8Array;
    source: MediaSource;
    alt?: string | null;
    baseName?: string;
  },
): Promise<LibraryEntry> {
  if (input.bytes.byteLength > MAX_MEDIA_BYTES) {
    throw new AppError("VALIDATION_ERROR", `file: over the ${MAX_MEDIA_BYTES}-byte limit`, [
      { field: "file", message: `at most ${MAX_MEDIA_BYTES} bytes` },
    ]);
  }
  const sniffed = sniffImage(input.bytes);
  if (!sniffed) throw notAnImage();
  const name = generateMediaName(sniffed.contentType, input.baseName);
  const key = libraryKey(input.siteId, name);
  const size = input.bytes.byteLength;
  const stored = await ctx.store.put(key, input.bytes, { contentType: sniffed.contentType });
  await recordLibraryFile(ctx, { ...input, key, name, sniffed, size, etag: stored.etag });
  return {
    key,
    name,
    url: mediaPath(key),
    size,
    width: sniffed.width,
    height: sniffed.height,
    contentType: sniffed.contentType,
  };
}

/** Counts a stored file against the caps and quota and inserts its row, in one transaction; deletes the bytes on failure. */
async function recordLibraryFile(
  ctx: MediaContext,
  f: {
    siteId: string;
    key: string;
    name: string;
    size: number;
    etag: string;
    sniffed: SniffedImage;
    source: MediaSource;
    alt?: string | null;
    reservation?: ImportReservation;
  },
): Promise<void> {
  try {
    await ctx.db.transaction(async (tx) => {
      await countLanding(ctx, tx, {
        siteId: f.siteId,
        size: f.size,
        countsAsUpload: f.source === "upload" || f.source === "import",
        reservation: f.reservation,
      });
      await tx.insert(mediaFiles).values({
        siteId: f.siteId,
        key: f.key,
        name: f.name,
        contentType: f.sniffed.contentType,
        size: f.size,
        width: f.sniffed.width,
        height: f.sniffed.height,
        alt: f.alt ?? null,
        source: f.source,
        etag: f.etag,
        createdAt: ctx.clock.now(),
      });
    });
  } catch (err) {
    await ctx.store.delete(f.key).catch(() => {});
    if (isUniqueViolation(err)) throw new AppError("INTERNAL_ERROR", "file name collision; try again");
    throw err;
  }
}

/**
 * addLibraryFile for bytes still streaming in (URL import): the first bytes decide the type (anything
 * else is refused before the rest is read), the body streams into the store under the size cap, and
 * only the leading bytes are kept to read the dimensions, so memory does not grow with the file.
 */
export async function addLibraryStream(
  ctx: MediaContext,
  input: {
    siteId: string;
    body: ReadableStream<Uint8Array>;
    size?: number | null;
    source: MediaSource;
    alt?: string | null;
    baseName?: string;
    /** The import's reserved upload slot and fetch attempt, settled in the landing transaction. */
    reservation?: ImportReservation;
  },
): Promise<LibraryEntry> {
  const reader = input.body.getReader();
  const head: Uint8Array[] = [];
  let headLength = 0;
  let ended = false;
  while (headLength < 64) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    head.push(value);
    headLength += value.byteLength;
  }
  const first = new Uint8Array(Buffer.concat(head));
  const type = sniffImage(first)?.contentType;
  if (!type) {
    await reader.cancel().catch(() => {});
    throw notAnImage();
  }
  const name = generateMediaName(type, input.baseName);
  const key = libraryKey(input.siteId, name);
  const kept: Uint8Array[] = [first];
  let keptLength = first.byteLength;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(first);
      if (ended) c.close();
    },
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) {
        c.close();
        return;
      }
      if (keptLength < SNIFF_KEEP_BYTES) {
        kept.push(value);
        keptLength += value.byteLength;
      }
      c.enqueue(value);
    },
    cancel: (why) => reader.cancel(why),
  });
  const stored = await ctx.store.put(key, body, {
    contentType: type,
    size: input.size ?? undefined,
    maxBytes: MAX_MEDIA_BYTES,
  });
  const sniffed = sniffImage(new Uint8Array(Buffer.concat(kept))) ?? {
    contentType: type,
    width: null,
    height: null,
  };
  await recordLibraryFile(ctx, { ...input, key, name, sniffed, size: stored.size, etag: stored.etag });
  return {
    key,
    name,
    url: mediaPath(key),
    size: stored.size,
    width: sniffed.width,
    height: sniffed.height,
    contentType: type,
  };
}

// Dimensions sit in the first kilobytes of nearly every file (JPEG: after EXIF, rarely past 256 KiB).
const SNIFF_KEEP_BYTES = 256 * 1024;

/** A library file of a site by key, or null (what the list does not show does not exist). */
export async function findLibraryFile(ctx: Context, key: string) {
  const [row] = await ctx.db.select().from(mediaFiles).where(eq(mediaFiles.key, key)).limit(1);
  return row ?? null;
}

/** `2026-11-22 18:30:00.123456` (UTC, as PostgreSQL prints a timestamp) → `2026-11-22T18:30:00.123Z`. */
export function isoMillis(utc: string): string {
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(utc);
  if (!m) return new Date(`${utc}Z`).toISOString();
  return `${m[1]}T${m[2]}.${((m[3] ?? "") + "000").slice(0, 3)}Z`;
}

/**
 * Lists a site's library, newest first, keyset-paginated; displayUrl carries a member grant for the
 * caller. With `orgId`, the site must belong to that organization (404 NOT_FOUND otherwise), checked in
 * the same round trip as the page: one query, the site row joined laterally to its page of files.
 * Written in SQL: this is the hottest keyed read, and the query builder cost more than the query.
 */
export async function listLibrary(
  ctx: MediaContext,
  siteId: string,
  query: ListQuery & { orgId?: string },
): Promise<{ images: MediaImage[]; nextCursor: string | null }> {
  const limit = query.limit ?? PAGE_LIMIT.default;
  if (!isUuid(siteId)) {
    if (query.orgId !== undefined) throw notFound("site");
    return { images: [], nextCursor: null };
  }
  // One UTC text per row serves both the cursor (microseconds) and createdAt (formatted here:
  // to_char per row halved the query's throughput).
  const page = sql`select f.id, f.key, f.name, f.size::int as size, (f.created_at at time zone 'UTC')::text as utc
    from media_files f where f.site_id = ${siteId}::uuid${andOlderThan(sql`f.created_at`, sql`f.id`, query.cursor)}
    order by f.created_at desc, f.id desc limit ${limit + 1}`;
  type Row = { id: string; key: string; name: string; size: number; utc: string };
  let rows: Row[];
  if (query.orgId === undefined) rows = [...(await ctx.db.execute<Row>(page))];
  else {
    const joined = [
      ...(await ctx.db.execute<Row & { site: string }>(sql`select s.id as site, p.*
        from sites s left join lateral (${page}) p on true
        where s.id = ${siteId}::uuid and s.org_id = ${query.orgId}::uuid`)),
    ];
    if (joined.length === 0) throw notFound("site");
    rows = joined.filter((r) => r.id !== null);
  }
  const { page: shown, nextCursor } = keysetPage(rows, limit, (r) => ({ at: `${r.utc}+00`, id: r.id }));
  return {
    images: shown.map((r) => ({
      name: r.name,
      url: mediaPath(r.key),
      displayUrl: grantMemberUrl(ctx, siteId, r.key),
      createdAt: isoMillis(r.utc),
      size: r.size,
    })),
    nextCursor,
  };
}
