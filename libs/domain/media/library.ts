import { randomBytes } from "node:crypto";
import { isUniqueViolation, mediaFiles, type Tx } from "@site/db";
import {
  AppError,
  andOlderThan,
  type Context,
  type InWork,
  isUuid,
  keysetPage,
  type ListQuery,
  notFound,
  type OwnedSite,
  PAGE_LIMIT,
  type Principal,
} from "@site/domain/core";
import { MAX_MEDIA_BYTES, type ObjectStore } from "@site/storage";
import { sql } from "drizzle-orm";
import { grantMemberUrl, mediaPath, memberGrantExpiry } from "./grants.ts";
import { IMAGE_TYPES, type ImageType, SNIFF_BYTES, type SniffedImage, sniffImage } from "./image_types.ts";
import { pageCache } from "./list_cache.ts";
import { recordMediaCreated } from "./media_events.ts";
import type { MediaLibraryPage } from "./models.ts";
import { pixelRefusal } from "./pixels.ts";
import { countLanding, type ImportReservation } from "./quota.ts";

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

/** Bytes a user sent (an upload, an import), not the renderer's own captures. */
const userSource = (source: MediaSource) => source === "upload" || source === "import";

/** Adds a file's bytes to a site's library: sniffs the type by magic bytes (JPEG/PNG/WebP/GIF only, else 400 VALIDATION_ERROR), reads width/height (a user's image over MEDIA_MAX_PIXELS: 400 VALIDATION_ERROR), checks and counts the org storage quota (403 FORBIDDEN) in the same transaction as the row, writes to the store, inserts media_files, returns the library entry. */
export async function addLibraryFile(
  ctx: MediaContext,
  input: {
    siteId: string;
    bytes: Uint8Array;
    source: MediaSource;
    alt?: string | null;
    baseName?: string;
  },
  opts: {
    commitWith?: CommitWith;
    /** Awaited after the bytes are stored, before the transaction: its failure removes them. */
    before?: Promise<unknown>;
  } = {},
): Promise<LibraryEntry> {
  if (input.bytes.byteLength > MAX_MEDIA_BYTES) {
    throw new AppError("VALIDATION_ERROR", `file: over the ${MAX_MEDIA_BYTES}-byte limit`, [
      { field: "file", message: `at most ${MAX_MEDIA_BYTES} bytes` },
    ]);
  }
  const sniffed = sniffImage(input.bytes);
  if (!sniffed) throw notAnImage();
  // A user's image over MEDIA_MAX_PIXELS is refused; the renderer's own captures (bounded viewports) are not checked.
  const tooBig = userSource(input.source) ? pixelRefusal(sniffed, ctx.config.limits.mediaMaxPixels) : null;
  if (tooBig) throw tooBig;
  const name = generateMediaName(sniffed.contentType, input.baseName);
  const key = libraryKey(input.siteId, name);
  const size = input.bytes.byteLength;
  const stored = await ctx.store.put(key, input.bytes, { contentType: sniffed.contentType });
  if (opts.before) {
    try {
      await opts.before;
    } catch (err) {
      await ctx.store.delete(key).catch(() => {});
      throw err;
    }
  }
  const entry: LibraryEntry = {
    key,
    name,
    url: mediaPath(key),
    size,
    width: sniffed.width,
    height: sniffed.height,
    contentType: sniffed.contentType,
  };
  await recordLibraryFile(ctx, { ...input, key, name, sniffed, size, etag: stored.etag }, (tx) =>
    opts.commitWith ? opts.commitWith(tx, entry) : Promise.resolve(),
  );
  return entry;
}

/**
 * The caller's part of the transaction that lists a file (a render's completion by the try that owns
 * it, decision 1440): it commits with the row and the quota, and throwing rolls them back and deletes
 * the stored bytes, so nothing is listed or counted.
 */
export type CommitWith = (tx: Tx, entry: LibraryEntry) => Promise<void>;

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
    /** Called in the landing transaction: the request's answer commits with the row (decision 1411). */
    inWork?: (tx: Tx) => Promise<void>;
  },
  commitWith?: (tx: Tx) => Promise<void>,
): Promise<void> {
  try {
    await ctx.db.transaction(async (tx) => {
      await countLanding(ctx, tx, {
        siteId: f.siteId,
        size: f.size,
        countsAsUpload: f.source === "upload" || f.source === "import",
        reservation: f.reservation,
      });
      const [row] = await tx
        .insert(mediaFiles)
        .values({
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
        })
        .returning();
      // media.created commits with the file (the webhook outbox, decision 0840); not for previews.
      if (row && f.source !== "preview") await recordMediaCreated(ctx, tx, row);
      await f.inWork?.(tx);
      await commitWith?.(tx);
    });
  } catch (err) {
    await ctx.store.delete(f.key).catch(() => {});
    if (isUniqueViolation(err)) throw new AppError("INTERNAL_ERROR", "file name collision; try again");
    throw err;
  }
}

/**
 * addLibraryFile for bytes still streaming in (URL import): the leading bytes decide the type and the
 * size the header declares (read up to SNIFF_BYTES until the header names it: a JPEG's SOF may follow
 * its metadata); anything else, or an image over MEDIA_MAX_PIXELS, is refused before the rest is read or
 * any byte is stored. The body then streams into the store under the size cap, so memory does not grow
 * with the file.
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
    /** Called with the entry inside the landing transaction (an idempotent request's answer, decision 1411). */
    inWork?: InWork<LibraryEntry>;
  },
): Promise<LibraryEntry> {
  const reader = input.body.getReader();
  const head: Uint8Array[] = [];
  let headLength = 0;
  let ended = false;
  let sniffed: SniffedImage | null = null;
  while (headLength < SNIFF_BYTES) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    head.push(value);
    headLength += value.byteLength;
    if (headLength < 64) continue;
    sniffed = sniffImage(new Uint8Array(Buffer.concat(head)));
    // Not an image, or one whose header named its size: no need to read further before deciding.
    if (!sniffed || sniffed.width !== null) break;
  }
  const first = new Uint8Array(Buffer.concat(head));
  sniffed = sniffImage(first);
  const refused = !sniffed
    ? notAnImage()
    : userSource(input.source)
      ? pixelRefusal(sniffed, ctx.config.limits.mediaMaxPixels)
      : null;
  if (refused || !sniffed) {
    await reader.cancel().catch(() => {});
    throw refused ?? notAnImage();
  }
  const type = sniffed.contentType;
  const name = generateMediaName(type, input.baseName);
  const key = libraryKey(input.siteId, name);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(first);
      if (ended) c.close();
    },
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) c.close();
      else c.enqueue(value);
    },
    cancel: (why) => reader.cancel(why),
  });
  const stored = await ctx.store.put(key, body, {
    contentType: type,
    size: input.size ?? undefined,
    maxBytes: MAX_MEDIA_BYTES,
  });
  const entry: LibraryEntry = {
    key,
    name,
    url: mediaPath(key),
    size: stored.size,
    width: sniffed.width,
    height: sniffed.height,
    contentType: type,
  };
  const { inWork, ...rest } = input;
  await recordLibraryFile(ctx, {
    ...rest,
    key,
    name,
    sniffed,
    size: stored.size,
    etag: stored.etag,
    inWork: inWork && ((tx) => inWork(tx, entry)),
  });
  return entry;
}

/** `2026-11-22 18:30:00.123456` (UTC, as PostgreSQL prints a timestamp) → `2026-11-22T18:30:00.123Z`. */
export function isoMillis(utc: string): string {
  // The common shape by slicing (a list formats 50 of these); other years through the pattern.
  if (utc.length >= 19 && utc[4] === "-" && utc[10] === " " && (utc.length === 19 || utc[19] === ".")) {
    return `${utc.slice(0, 10)}T${utc.slice(11, 19)}.${`${utc.slice(20, 23)}000`.slice(0, 3)}Z`;
  }
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(utc);
  if (!m) return new Date(`${utc}Z`).toISOString();
  return `${m[1]}T${m[2]}.${`${m[3] ?? ""}000`.slice(0, 3)}Z`;
}

/** A page of a site's library as the API answers it (the `MediaLibraryPage` model). */
export type LibraryPage = MediaLibraryPage;

/** Lists a site's library, newest first, keyset-paginated; displayUrl carries a member grant (readLibrary). */
export function listLibrary(ctx: MediaContext, site: OwnedSite, query: ListQuery): Promise<LibraryPage> {
  return readLibrary(ctx, site.id, query);
}

/**
 * The library of a site of the caller's organization (404 NOT_FOUND for any other, as getOwnSite
 * answers): the ownership check and the page in one round trip (decision 0803), for GET …/media.
 */
export function listOwnLibrary(
  ctx: MediaContext,
  principal: Principal,
  siteId: string,
  query: ListQuery,
): Promise<LibraryPage> {
  return readLibrary(ctx, siteId, { ...query, orgId: principal.orgId });
}

/**
 * Lists a site's library, newest first, keyset-paginated; displayUrl carries a member grant for the
 * caller. With `orgId`, the site must belong to that organization (404 NOT_FOUND otherwise).
 * One round trip: the site's ownership, its media version and the page, as one JSON column. A page built
 * once is kept in process and served again while the site's media version (moved by triggers on every
 * media_files change, migration 0008) and the grants' minute are the same: such a read costs one small
 * query that checks ownership and the version (decision 0810). Written in SQL: the hottest keyed read.
 */
async function readLibrary(
  ctx: MediaContext,
  siteId: string,
  query: ListQuery & { orgId?: string },
): Promise<LibraryPage> {
  const limit = query.limit ?? PAGE_LIMIT.default;
  // No such site of the organization: 404; internal callers (no organization) read an empty library.
  const absent = (): LibraryPage => {
    if (query.orgId !== undefined) throw notFound("site");
    return { images: [], nextCursor: null };
  };
  if (!isUuid(siteId)) return absent();
  // A deleted site has no library (decision 0730).
  const owned =
    query.orgId === undefined
      ? sql` and s.deleted_at is null`
      : sql` and s.org_id = ${query.orgId}::uuid and s.deleted_at is null`;
  const cache = pageCache(ctx);
  const exp = memberGrantExpiry(ctx);
  const kept = cache.get(siteId, limit, query.cursor, exp);
  if (kept) {
    // A page built before: one small query checks ownership and whether the library changed since.
    const [site] = await ctx.db.execute<{
      version: string;
    }>(sql`select coalesce(v.version, 0)::text as version
      from sites s left join site_media_versions v on v.site_id = s.id where s.id = ${siteId}::uuid${owned}`);
    if (!site) return absent();
    if (site.version === kept.version) return kept.page;
  }

  // One UTC text per row serves both the cursor (microseconds) and createdAt (formatted here:
  // to_char per row halved the query's throughput). The page comes back as one JSON array (one
  // column to decode instead of five per row), with the version it was read at (one snapshot).
  const [read] = await ctx.db.execute<{ page: PageTuple[]; version: string }>(sql`
    select coalesce(v.version, 0)::text as version, p.page
    from sites s left join site_media_versions v on v.site_id = s.id
    cross join lateral (
      select coalesce(json_agg(json_build_array(f.id, f.key, f.name, f.size::int,
        (f.created_at at time zone 'UTC')::text) order by f.created_at desc, f.id desc), '[]'::json) as page
      from (select f.id, f.key, f.name, f.size, f.created_at from media_files f
        where f.site_id = s.id${andOlderThan(sql`f.created_at`, sql`f.id`, query.cursor)}
        order by f.created_at desc, f.id desc limit ${limit + 1}) f
    ) p
    where s.id = ${siteId}::uuid${owned}`);
  if (!read) return absent();
  const rows = read.page.map(([id, key, name, size, utc]) => ({ id, key, name, size, utc }));
  const { page: shown, nextCursor } = keysetPage(rows, limit, (r) => ({ at: `${r.utc}+00`, id: r.id }));
  const built: LibraryPage = {
    images: shown.map((r) => ({
      id: r.id,
      name: r.name,
      url: mediaPath(r.key),
      displayUrl: grantMemberUrl(ctx, siteId, r.key),
      createdAt: isoMillis(r.utc),
      size: r.size,
    })),
    nextCursor,
  };
  cache.set(siteId, limit, query.cursor, read.version, exp, built);
  return built;
}

type PageTuple = [id: string, key: string, name: string, size: number, utc: string];
