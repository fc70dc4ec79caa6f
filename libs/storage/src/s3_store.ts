import { Readable } from "node:stream";
import type { ReadableStream as NodeWebStream } from "node:stream/web";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { assertSafeKey, type ObjectInfo, type ObjectStore, StoreError } from "./object_store.ts";

/** Settings of the S3 driver (the contract's S3_* variables). */
export type S3StoreOptions = {
  endpoint: string | null;
  /**
   * S3_PUBLIC_ENDPOINT: the address clients outside the service network reach the same storage at
   * (`https://media.example.com`), used in presigned URLs; unset, presigned URLs name `endpoint`.
   */
  publicEndpoint?: string | null;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** One request's bound (connect and answer); default 10000 ms. */
  timeoutMs?: number;
};

// Codes S3-compatible servers give for a full backend (MinIO answers 507 XMinioStorageFull).
const FULL_S3_CODES = new Set(["XMinioStorageFull", "InsufficientStorage", "EntityTooLarge"]);
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ConnectionRefused",
]);

/**
 * The StoreError an S3 failure means: a 507 or a full-backend code is `full`; any other 5xx, a
 * timeout or a network failure is `unavailable`; null for a 4xx (our request was wrong: a bug).
 */
export function s3StoreErrorOf(err: unknown): StoreError | null {
  if (err instanceof StoreError) return err;
  const e = err as { name?: string; code?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const code = e?.Code ?? e?.name ?? "";
  if (status === 507 || FULL_S3_CODES.has(code))
    return new StoreError("full", "the object store has no space left", { cause: err });
  if ((status !== undefined && status >= 500) || code === "SlowDown" || code === "ServiceUnavailable")
    return new StoreError("unavailable", `the object store answered ${status ?? code}`, { cause: err });
  if (
    status === undefined &&
    (e?.name === "TimeoutError" ||
      e?.name === "RequestTimeout" ||
      NETWORK_CODES.has(e?.code ?? "") ||
      NETWORK_CODES.has(e?.name ?? "") ||
      /socket hang up|ECONNREFUSED|ECONNRESET|timed? ?out|Unable to connect|connection/i.test(
        String((err as Error)?.message ?? ""),
      ))
  )
    return new StoreError("unavailable", "the object store cannot be reached", { cause: err });
  return null;
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** Opens the S3 driver; bodies are sent without chunk framing so any S3-compatible server stores them as sent. */
export function openS3Store(opts: S3StoreOptions): ObjectStore {
  const clientFor = (endpoint: string | null | undefined) =>
    new S3Client({
      region: opts.region,
      endpoint: endpoint ?? undefined,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // Bounded: a store that does not answer fails the request (503), it does not hang it.
      requestHandler: {
        connectionTimeout: Math.min(3000, opts.timeoutMs ?? 10_000),
        requestTimeout: opts.timeoutMs ?? 10_000,
      },
      maxAttempts: 2,
    });
  const client = clientFor(opts.endpoint);
  // Presigned URLs are signed for the host the client will send them to (SigV4 signs the Host header):
  // the public endpoint when there is one. This client only signs; it never connects.
  const signer = opts.publicEndpoint ? clientFor(opts.publicEndpoint) : client;
  const Bucket = opts.bucket;
  /** client.send, with outages turned into StoreError("full" | "unavailable"). */
  const send: typeof client.send = (async (command: Parameters<typeof client.send>[0]) => {
    try {
      return await client.send(command);
    } catch (err) {
      if (isMissing(err)) throw err;
      throw s3StoreErrorOf(err) ?? err;
    }
  }) as typeof client.send;

  async function head(key: string): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    try {
      const out = await send(new HeadObjectCommand({ Bucket, Key: key }));
      return {
        key,
        size: out.ContentLength ?? 0,
        contentType: out.ContentType ?? "application/octet-stream",
        etag: out.ETag ?? `"${out.ContentLength ?? 0}"`,
        lastModified: out.LastModified ?? new Date(0),
      };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  return {
    driver: "s3",
    head,
    async put(key, body, o) {
      assertSafeKey(key);
      if (!(body instanceof Uint8Array) && o.size === undefined) {
        // S3 needs the length before the first byte: buffer a size-less stream, within its cap.
        const chunks: Uint8Array[] = [];
        let total = 0;
        const reader = body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          if (o.maxBytes !== undefined && total > o.maxBytes) {
            await reader.cancel();
            throw new StoreError("too_large", `body is over ${o.maxBytes} bytes`);
          }
          chunks.push(value);
        }
        body = new Uint8Array(Buffer.concat(chunks));
      }
      const size = body instanceof Uint8Array ? body.byteLength : o.size;
      if (o.size !== undefined && body instanceof Uint8Array && body.byteLength !== o.size)
        throw new StoreError("size_mismatch", `body has ${body.byteLength} bytes, ${o.size} declared`);
      // The body's own failure (a source that timed out) is rethrown as is, not as a store outage.
      let sourceError: unknown = null;
      let sent: Uint8Array | ReadableStream<Uint8Array> = body;
      if (!(body instanceof Uint8Array)) {
        const reader = body.getReader();
        sent = new ReadableStream<Uint8Array>({
          async pull(c) {
            try {
              const { done, value } = await reader.read();
              if (done) c.close();
              else c.enqueue(value);
            } catch (err) {
              sourceError = err;
              c.error(err);
            }
          },
          cancel: (why) => reader.cancel(why),
        });
      }
      try {
        await send(
          new PutObjectCommand({
            Bucket,
            Key: key,
            // The SDK's Node HTTP handler sends Node streams, not Web streams.
            Body:
              sent instanceof Uint8Array
                ? sent
                : Readable.fromWeb(sent as unknown as NodeWebStream<Uint8Array>),
            ContentType: o.contentType,
            ContentLength: size,
          }),
        );
      } catch (err) {
        throw sourceError ?? err;
      }
      const info = await head(key);
      if (!info) throw new Error("object missing right after put");
      return info;
    },
    async get(key, o = {}) {
      assertSafeKey(key);
      try {
        const range = o.range ? `bytes=${o.range.start}-${o.range.end}` : undefined;
        const out = await send(new GetObjectCommand({ Bucket, Key: key, Range: range }));
        const full = o.range
          ? Number(/\/(\d+)$/.exec(out.ContentRange ?? "")?.[1] ?? out.ContentLength ?? 0)
          : (out.ContentLength ?? 0);
        const body = out.Body?.transformToWebStream() as ReadableStream<Uint8Array> | undefined;
        return {
          info: {
            key,
            size: full,
            contentType: out.ContentType ?? "application/octet-stream",
            etag: out.ETag ?? `"${full}"`,
            lastModified: out.LastModified ?? new Date(0),
          },
          body: body ?? new Blob([]).stream(),
        };
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async delete(key) {
      assertSafeKey(key);
      await send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async *list(prefix) {
      let token: string | undefined;
      do {
        const out = await send(
          new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const o of out.Contents ?? []) {
          if (!o.Key) continue;
          const info = await head(o.Key);
          if (info) yield info;
        }
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    },
    async presignPut(key, o) {
      assertSafeKey(key);
      // Content-Type and Content-Length are signed: S3 itself refuses other bytes.
      const url = await getSignedUrl(
        signer,
        new PutObjectCommand({ Bucket, Key: key, ContentType: o.contentType, ContentLength: o.size }),
        { expiresIn: o.expiresInSeconds, signableHeaders: new Set(["content-type", "content-length"]) },
      );
      return { url, method: "PUT", headers: { "Content-Type": o.contentType } };
    },
    async checkWritable() {
      const key = `health/probe-${process.pid}`;
      await send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: new Uint8Array(1),
          ContentType: "application/octet-stream",
        }),
      );
      await send(new DeleteObjectCommand({ Bucket, Key: key })).catch(() => {});
    },
    async close() {
      client.destroy();
      if (signer !== client) signer.destroy();
    },
  };
}

/** The bucket's own URL prefixes for a key (virtual-host and path style), to recognize legacy absolute URLs. */
export function s3UrlPrefixes(
  opts: Pick<S3StoreOptions, "endpoint" | "publicEndpoint" | "bucket" | "region">,
): string[] {
  const b = opts.bucket;
  const out = [
    `https://${b}.s3.amazonaws.com/`,
    `https://${b}.s3.${opts.region}.amazonaws.com/`,
    `https://s3.${opts.region}.amazonaws.com/${b}/`,
    `https://s3.amazonaws.com/${b}/`,
  ];
  for (const endpoint of [opts.endpoint, opts.publicEndpoint]) {
    if (!endpoint) continue;
    const e = new URL(endpoint);
    const base = `${e.protocol}//${e.host}`;
    out.push(`${base}/${b}/`, `${e.protocol}//${b}.${e.host}/`);
  }
  return out;
}
