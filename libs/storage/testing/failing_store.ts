import type { ObjectStore } from "../src/object_store.ts";
import { s3StoreErrorOf } from "../src/s3_store.ts";

/** How the wrapped store's writes fail: a disk's errno, an S3 status, or not at all. */
export type WriteFault = "ENOSPC" | "EROFS" | "EDQUOT" | { s3Status: number } | null;

/** The error a full or read-only disk gives Node's fs (with the path in its message, as the real one). */
export function errnoError(code: "ENOSPC" | "EROFS" | "EDQUOT", path = "/srv/data/objects/.tmp/x"): Error {
  const text = {
    ENOSPC: "no space left on device",
    EROFS: "read-only file system",
    EDQUOT: "disk quota exceeded",
  }[code];
  return Object.assign(new Error(`${code}: ${text}, write '${path}'`), {
    code,
    errno: -28,
    syscall: "write",
    path,
  });
}

/** The error the AWS SDK gives for an S3 answer with `status` (507 is MinIO's "storage full"). */
export function s3StatusError(status: number): Error {
  const name = status === 507 ? "XMinioStorageFull" : status === 503 ? "SlowDown" : "InternalError";
  return Object.assign(new Error(`${name}: the server answered ${status}`), {
    name,
    Code: name,
    $metadata: { httpStatusCode: status },
  });
}

/** A disk's raw errno (as a driver that forgot to map it would pass it on), or what the S3 driver throws. */
function faultError(fault: NonNullable<WriteFault>): Error {
  if (typeof fault === "string") return errnoError(fault);
  const raw = s3StatusError(fault.s3Status);
  return s3StoreErrorOf(raw) ?? raw;
}

/**
 * Wraps a real store so that its writes (put, signed PUT, checkWritable) fail the way a full disk or a
 * failing S3 does (a disk's raw errno; the S3 driver's StoreError for a 5xx); reads keep working. `setFault`
 * switches the failure on and off mid-test (the disk fills, then space is freed).
 */
export function failingStore(
  inner: ObjectStore,
  initial: WriteFault = "ENOSPC",
): ObjectStore & { setFault(f: WriteFault): void; readonly writesRefused: number } {
  let fault: WriteFault = initial;
  let refused = 0;
  const refuse = async (body?: unknown): Promise<never> => {
    refused++;
    if (body && typeof (body as ReadableStream).cancel === "function")
      await (body as ReadableStream).cancel().catch(() => {});
    throw faultError(fault!);
  };
  return {
    get driver() {
      return inner.driver;
    },
    get writesRefused() {
      return refused;
    },
    setFault(f) {
      fault = f;
    },
    async put(key, body, o) {
      if (fault) return refuse(body);
      return inner.put(key, body, o);
    },
    get: (key, o) => inner.get(key, o),
    head: (key) => inner.head(key),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
    presignPut: (key, o) => inner.presignPut(key, o),
    ...(inner.receiveSignedPut
      ? {
          async receiveSignedPut(
            key: string,
            request: Parameters<NonNullable<ObjectStore["receiveSignedPut"]>>[1],
          ) {
            if (fault) return refuse(request.body);
            return inner.receiveSignedPut!(key, request);
          },
        }
      : {}),
    async checkWritable() {
      if (fault) return refuse();
      return inner.checkWritable();
    },
    ...(inner.sweepTemporary
      ? { sweepTemporary: (olderThan: Date) => inner.sweepTemporary!(olderThan) }
      : {}),
    close: () => inner.close(),
  };
}
