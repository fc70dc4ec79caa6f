import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Readable } from "node:stream";
import type { ReadableStream as NodeWebStream } from "node:stream/web";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { assertSafeKey, type ObjectInfo, type ObjectStore, StoreError } from "./object_store.ts";

/** Settings of the S3 driver (the contract's S3_* variables). */
export type S3StoreOptions = {
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
};

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** Opens the S3 driver; bodies are sent without chunk framing so any S3-compatible server stores them as sent. */
export function openS3Store(opts: S3StoreOptions): ObjectStore {
  const client = new S3Client({
    region: opts.region,
    endpoint: opts.endpoint ?? undefined,
    forcePathStyle: opts.forcePathStyle,
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const Bucket = opts.bucket;

  async function head(key: string): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    try {
      const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
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
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          // The SDK's Node HTTP handler sends Node streams, not Web streams.
          Body:
            body instanceof Uint8Array
              ? body
              : Readable.fromWeb(body as unknown as NodeWebStream<Uint8Array>),
          ContentType: o.contentType,
          ContentLength: size,
        }),
      );
      const info = await head(key);
      if (!info) throw new Error("object missing right after put");
      return info;
    },
    async get(key, o = {}) {
      assertSafeKey(key);
      try {
        const range = o.range ? `bytes=${o.range.start}-${o.range.end}` : undefined;
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: range }));
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
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async *list(prefix) {
      let token: string | undefined;
      do {
        const out = await client.send(
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
        client,
        new PutObjectCommand({ Bucket, Key: key, ContentType: o.contentType, ContentLength: o.size }),
        { expiresIn: o.expiresInSeconds, signableHeaders: new Set(["content-type", "content-length"]) },
      );
      return { url, method: "PUT", headers: { "Content-Type": o.contentType } };
    },
    async close() {
      client.destroy();
    },
  };
}

/** The bucket's own URL prefixes for a key (virtual-host and path style), to recognize legacy absolute URLs. */
export function s3UrlPrefixes(opts: Pick<S3StoreOptions, "endpoint" | "bucket" | "region">): string[] {
  const b = opts.bucket;
  const out = [
    `https://${b}.s3.amazonaws.com/`,
    `https://${b}.s3.${opts.region}.amazonaws.com/`,
    `https://s3.${opts.region}.amazonaws.com/${b}/`,
    `https://s3.amazonaws.com/${b}/`,
  ];
  if (opts.endpoint) {
    const e = new URL(opts.endpoint);
    const base = `${e.protocol}//${e.host}`;
    out.push(`${base}/${b}/`, `${e.protocol}//${b}.${e.host}/`);
  }
  return out;
}
