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
  /** Releases clients and sockets. */
  close(): Promise<void>;
}

/** Why a store refused: the key, a length, or a presigned PUT's signature. */
export class StoreError extends Error {
  readonly reason:
    | "invalid_key"
    | "too_large"
    | "size_mismatch"
    | "bad_signature"
    | "expired"
    | "bad_content_type";
  constructor(reason: StoreError["reason"], message: string) {
    super(message);
    this.name = "StoreError";
    this.reason = reason;
  }
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
