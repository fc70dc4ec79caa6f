/** What the store knows about one object. */
export type ObjectInfo = {
  key: string;
  size: number;
  contentType: string;
  /** A quoted strong validator, e.g. `"9e107d9d372bb6826bd81d3542a419d6"`. */
  etag: string;
  lastModified: Date;
};

/** An inclusive byte range of an object. */
export type ByteRange = { start: number; end: number };

/** A signed PUT a client sends bytes to, with the headers it must send exactly. */
export type PresignedPut = { url: string; method: "PUT"; headers: Record<string, string> };

/** The bytes to store: a whole buffer, or a stream of known length. */
export type PutBody = Uint8Array | ReadableStream<Uint8Array>;

/** Object storage: the fs and s3 drivers both pass one conformance suite. */
export interface ObjectStore {
  /** Which driver is live; for logs only. */
  readonly driver: "fs" | "s3";
  /**
   * Stores `body` under `key`. A stream may give its `size` (checked) or only a `maxBytes` cap; drivers
   * that must know the length up front (S3) buffer a size-less stream. Throws StoreError("too_large"
   * | "size_mismatch") on a wrong length, or the stream's own error, storing nothing.
   */
  put(
    key: string,
    body: PutBody,
    opts: { contentType: string; size?: number; maxBytes?: number },
  ): Promise<ObjectInfo>;
  /**
   * Streams an object (or one byte range of it); null when it does not exist. Drivers backed by local
   * files also give `blob`, lazy and file-backed, which a Response sends without copying it through JS.
   */
  get(
    key: string,
    opts?: { range?: ByteRange },
  ): Promise<{ info: ObjectInfo; body: ReadableStream<Uint8Array>; blob?: Blob } | null>;
  /** The object's metadata; null when it does not exist. */
  head(key: string): Promise<ObjectInfo | null>;
  /** Deletes an object; deleting a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** The objects whose key starts with `prefix`, in key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** A URL that accepts one PUT of exactly `size` bytes of `contentType` until the expiry. */
  presignPut(
    key: string,
    opts: { contentType: string; size: number; expiresInSeconds: number },
  ): Promise<PresignedPut>;
  /**
   * Stores the body of a PUT to a URL this store presigned, checking signature, expiry, exact
   * Content-Type and the size while streaming. Only stores that serve their own PUTs (fs) have it.
   */
  receiveSignedPut?(
    key: string,
    request: {
      searchParams: URLSearchParams;
      contentType: string | null;
      body: ReadableStream<Uint8Array> | null;
    },
  ): Promise<ObjectInfo>;
  /**
   * Proves the store can take a write now (writes and removes a small probe object); throws
   * StoreError("full" | "unavailable") when it cannot. /readyz calls it with a short bound.
   */
  checkWritable(): Promise<void>;
  /**
   * Removes the temporary files of writes that never finished (a process killed mid-transfer) when
   * they are older than `olderThan`; returns how many. Only stores that keep such files (fs) have it.
   */
  sweepTemporary?(olderThan: Date): Promise<number>;
  /** Releases clients and sockets. */
  close(): Promise<void>;
}

/**
 * Why a store refused: the key, a length, or a presigned PUT's signature; or the store itself cannot
 * work right now: `full` (no space, quota of the disk), `unavailable` (read-only, unreachable, a 5xx,
 * a timeout). The message of those two is a sentence for operators' logs; `cause` keeps the original.
 */
export class StoreError extends Error {
  readonly reason:
    | "invalid_key"
    | "too_large"
    | "size_mismatch"
    | "bad_signature"
    | "expired"
    | "bad_content_type"
    | "full"
    | "unavailable";
  constructor(reason: StoreError["reason"], message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = "StoreError";
    this.reason = reason;
  }
}

/** True for a StoreError saying the store cannot work right now (full or unavailable), not a bad request. */
export function isStoreDown(err: unknown): boolean {
  return err instanceof StoreError && (err.reason === "full" || err.reason === "unavailable");
}

// errno codes of a disk that cannot take a write, and of one that cannot be reached at all.
const FULL_CODES = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);
const DOWN_CODES = new Set(["EROFS", "EIO", "ENXIO", "ESTALE", "ENODEV", "EMFILE", "ENFILE"]);

/**
 * The StoreError a raw file-system failure means: `full` for ENOSPC/EDQUOT, `unavailable` for a
 * read-only or failing disk; null for anything else (a bug, or a missing file the caller handles).
 */
export function storeErrorOf(err: unknown): StoreError | null {
  if (err instanceof StoreError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  if (FULL_CODES.has(code))
    return new StoreError("full", "the object store has no space left", { cause: err });
  if (DOWN_CODES.has(code))
    return new StoreError("unavailable", "the object store cannot be written", { cause: err });
  return null;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/**
 * Checks that a key stays inside the store's root: segments of letters, digits and `._-`, never
 * starting with a dot (so no `.`/`..`), no empty segment, no absolute path, no `%`, `\` or NUL.
 */
export function isSafeKey(key: string): boolean {
  if (typeof key !== "string" || key.length === 0 || key.length > 1024) return false;
  return key.split("/").every((s) => SEGMENT.test(s));
}

/** Throws StoreError("invalid_key") unless isSafeKey(key). */
export function assertSafeKey(key: string): void {
  if (!isSafeKey(key)) throw new StoreError("invalid_key", "invalid storage key");
}
