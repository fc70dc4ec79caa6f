import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  statfs,
  unlink,
  writeFile,
} from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import {
  assertSafeKey,
  type ObjectInfo,
  type ObjectStore,
  type PresignedPut,
  type PutBody,
  StoreError,
  storeErrorOf,
} from "./object_store.ts";

/** Settings of the local-disk driver. */
export type FsStoreOptions = {
  /** The directory holding the objects (DATA_DIR/objects). */
  root: string;
  /** The API's public base URL: presigned PUTs point at its `/api/media/<key>` route. */
  publicBaseUrl: string;
  /** Signs presigned PUTs. */
  secretKey: string;
  /** The largest body a presigned PUT may carry, whatever it was signed for. */
  maxPutBytes?: number;
  /**
   * STORAGE_MIN_FREE_BYTES: a write that would leave less free space on the disk is refused as `full`,
   * and checkWritable fails below it, so readiness and writes share one threshold (0: no threshold).
   */
  minFreeBytes?: number;
  now?: () => Date;
};

type Meta = { contentType: string; etag: string };

function putSignature(secretKey: string, parts: string[]): string {
  const key = createHmac("sha256", secretKey).update("purpose:local-put").digest();
  return createHmac("sha256", key).update(parts.join("\n")).digest("base64url");
}

async function* chunksOf(body: PutBody): AsyncGenerator<Uint8Array> {
  if (body instanceof Uint8Array) {
    yield body;
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value) yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Opens the local-disk driver: objects under `root`, metadata beside them under `root/.meta`. */
export function openFsStore(opts: FsStoreOptions): ObjectStore {
  const root = resolve(opts.root);
  const now = opts.now ?? (() => new Date());
  const pathOf = (base: string, key: string) => {
    assertSafeKey(key);
    const p = resolve(base, key);
    if (!p.startsWith(base + sep)) throw new StoreError("invalid_key", "invalid storage key");
    return p;
  };
  const minFree = opts.minFreeBytes ?? 0;
  const dataPath = (key: string) => pathOf(root, key);

  /** Refuses (`full`) a write of `bytes` that would leave less than minFreeBytes free on the disk. */
  async function assertRoomFor(bytes: number): Promise<void> {
    if (minFree <= 0) return;
    let free: number;
    try {
      await mkdir(root, { recursive: true });
      const fs = await statfs(root);
      free = fs.bavail * fs.bsize;
    } catch (err) {
      throw (
        storeErrorOf(err) ??
        new StoreError("unavailable", "the object store's free space cannot be read", { cause: err })
      );
    }
    if (free - bytes < minFree)
      throw new StoreError(
        "full",
        `the object store keeps ${minFree} bytes free and has ${free}; a write of ${bytes} bytes is refused`,
      );
  }
  const metaPath = (key: string) => `${pathOf(join(root, ".meta"), key)}.json`;

  async function readMeta(key: string): Promise<Meta | null> {
    try {
      return JSON.parse(await readFile(metaPath(key), "utf8")) as Meta;
    } catch {
      return null;
    }
  }

  async function head(key: string): Promise<ObjectInfo | null> {
    const path = dataPath(key);
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch {
      return null;
    }
    if (!st.isFile()) return null;
    const meta = await readMeta(key);
    return {
      key,
      size: st.size,
      contentType: meta?.contentType ?? "application/octet-stream",
      etag: meta?.etag ?? `"${st.size.toString(16)}-${st.mtimeMs.toString(16)}"`,
      lastModified: st.mtime,
    };
  }

  /** A failing disk becomes StoreError("full" | "unavailable"): never an errno or a path upward. */
  async function put(
    key: string,
    body: PutBody,
    o: { contentType: string; size?: number; maxBytes?: number },
  ): Promise<ObjectInfo> {
    try {
      return await putRaw(key, body, o);
    } catch (err) {
      throw storeErrorOf(err) ?? err;
    }
  }

  async function putRaw(
    key: string,
    body: PutBody,
    o: { contentType: string; size?: number; maxBytes?: number },
  ): Promise<ObjectInfo> {
    const path = dataPath(key);
    const meta = metaPath(key);
    // The bytes it brings, when known: a declared size, or a body given whole (decision 1421).
    await assertRoomFor(o.size ?? (body instanceof Uint8Array ? body.byteLength : 0));
    const tmpDir = join(root, ".tmp");
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, randomBytes(12).toString("hex"));
    const md5 = createHash("md5");
    let written = 0;
    const limit = o.size ?? o.maxBytes ?? Number.POSITIVE_INFINITY;
    const fh = await open(tmp, "w");
    try {
      for await (const chunk of chunksOf(body)) {
        written += chunk.byteLength;
        if (written > limit) {
          throw o.size !== undefined
            ? new StoreError("size_mismatch", `body is longer than the declared ${o.size} bytes`)
            : new StoreError("too_large", `body is over ${limit} bytes`);
        }
        md5.update(chunk);
        await fh.write(chunk);
      }
      if (o.size !== undefined && written !== o.size)
        throw new StoreError("size_mismatch", `body has ${written} bytes, ${o.size} declared`);
      await fh.close();
      const etag = `"${md5.digest("hex")}"`;
      await mkdir(dirname(path), { recursive: true });
      await mkdir(dirname(meta), { recursive: true });
      await writeFile(meta, JSON.stringify({ contentType: o.contentType, etag } satisfies Meta));
      await rename(tmp, path);
    } catch (err) {
      await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw err;
    }
    return (await head(key))!;
  }

  async function* walk(dir: string, prefixKey: string): AsyncGenerator<string> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const key = prefixKey ? `${prefixKey}/${e.name}` : e.name;
      if (e.isDirectory()) yield* walk(join(dir, e.name), key);
      else if (e.isFile()) yield key;
    }
  }

  return {
    driver: "fs",
    put: (key, body, o) => put(key, body, o),
    head,
    async get(key, o = {}) {
      const info = await head(key);
      if (!info) return null;
      const file = Bun.file(dataPath(key));
      // A Bun.file Blob stays lazy: a Response sends it with sendfile, reading nothing into memory.
      const blob = o.range ? file.slice(o.range.start, o.range.end + 1) : file;
      return { info, body: blob.stream(), blob };
    },
    async delete(key) {
      try {
        await rm(dataPath(key), { force: true });
        await rm(metaPath(key), { force: true });
      } catch (err) {
        throw storeErrorOf(err) ?? err;
      }
    },
    async *list(prefix) {
      // Walk from the deepest whole directory of the prefix, then filter by the full prefix.
      const cut = prefix.lastIndexOf("/");
      const dirKey = cut >= 0 ? prefix.slice(0, cut) : "";
      if (dirKey) assertSafeKey(dirKey);
      for await (const key of walk(dirKey ? join(root, dirKey) : root, dirKey)) {
        if (!key.startsWith(prefix)) continue;
        const info = await head(key);
        if (info) yield info;
      }
    },
    async presignPut(key, o): Promise<PresignedPut> {
      assertSafeKey(key);
      const exp = Math.floor(now().getTime() / 1000) + o.expiresInSeconds;
      const sig = putSignature(opts.secretKey, [key, o.contentType, String(o.size), String(exp)]);
      const q = new URLSearchParams({
        "X-Expires": String(exp),
        "X-Content-Type": o.contentType,
        "X-Size": String(o.size),
        "X-Signature": sig,
      });
      const path = key.split("/").map(encodeURIComponent).join("/");
      return {
        url: `${opts.publicBaseUrl}/api/media/${path}?${q}`,
        method: "PUT",
        headers: { "Content-Type": o.contentType },
      };
    },
    async receiveSignedPut(key, req) {
      assertSafeKey(key);
      const p = req.searchParams;
      const [exp, ct, size, sig] = ["X-Expires", "X-Content-Type", "X-Size", "X-Signature"].map(
        (n) => p.get(n) ?? "",
      ) as [string, string, string, string];
      const want = Buffer.from(putSignature(opts.secretKey, [key, ct, size, exp]));
      const got = Buffer.from(sig);
      if (
        !/^\d+$/.test(exp) ||
        !/^\d+$/.test(size) ||
        want.length !== got.length ||
        !timingSafeEqual(want, got)
      )
        throw new StoreError("bad_signature", "the upload signature does not match");
      if (Number(exp) * 1000 < now().getTime()) throw new StoreError("expired", "the upload URL has expired");
      if ((req.contentType ?? "").trim().toLowerCase() !== ct.toLowerCase())
        throw new StoreError("bad_content_type", `Content-Type must be exactly ${ct}`);
      const n = Number(size);
      if (opts.maxPutBytes !== undefined && n > opts.maxPutBytes)
        throw new StoreError("too_large", `body is over ${opts.maxPutBytes} bytes`);
      return put(key, req.body ?? new Uint8Array(0), { contentType: ct, size: n });
    },
    async checkWritable() {
      const tmpDir = join(root, ".tmp");
      const probe = join(tmpDir, `probe-${randomBytes(6).toString("hex")}`);
      // Below the threshold every write is refused: not ready, whatever a small probe could still do.
      await assertRoomFor(0);
      try {
        await mkdir(tmpDir, { recursive: true });
        // A few blocks, not an empty file: creating an inode can succeed on a disk with no space.
        await writeFile(probe, new Uint8Array(16 * 1024));
      } catch (err) {
        throw (
          storeErrorOf(err) ??
          new StoreError("unavailable", "the object store cannot be written", { cause: err })
        );
      } finally {
        await unlink(probe).catch(() => {});
      }
    },
    async sweepTemporary(olderThan) {
      const tmpDir = join(root, ".tmp");
      let names: string[];
      try {
        names = await readdir(tmpDir);
      } catch {
        return 0;
      }
      let removed = 0;
      for (const name of names) {
        const p = join(tmpDir, name);
        try {
          const st = await stat(p);
          if (st.isFile() && st.mtime < olderThan) {
            await unlink(p);
            removed++;
          }
        } catch {
          // Gone already (its write finished or another sweeper took it).
        }
      }
      return removed;
    },
    async close() {},
  };
}
