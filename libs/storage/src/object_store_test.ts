import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestS3 } from "../testing/s3_server.ts";
import { openFsStore } from "./fs_store.ts";
import { isSafeKey, type ObjectStore, StoreError } from "./object_store.ts";
import { openS3Store } from "./s3_store.ts";

type Driver = { name: string; open(): Promise<{ store: ObjectStore; stop(): Promise<void> }> };

const drivers: Driver[] = [
  {
    name: "fs",
    open: async () => {
      const root = mkdtempSync(join(tmpdir(), "fs-store-"));
      const store = openFsStore({ root, publicBaseUrl: "http://127.0.0.1:9", secretKey: "k".repeat(32) });
      return { store, stop: async () => rmSync(root, { recursive: true, force: true }) };
    },
  },
  {
    name: "s3",
    open: async () => {
      const s3 = await startTestS3();
      const store = openS3Store(s3.options);
      return {
        store,
        stop: async () => {
          await store.close();
          await s3.stop();
        },
      };
    },
  },
];

const bytes = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * seed + 3) & 0xff);
const streamOf = (b: Uint8Array, chunk = 1000) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < b.length; i += chunk) c.enqueue(b.slice(i, i + chunk));
      c.close();
    },
  });

describe.each(drivers)("ObjectStore conformance: $name", (driver) => {
  let store: ObjectStore;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ store, stop } = await driver.open());
  });
  afterAll(async () => stop());

  test("put a buffer, then head and get it back byte for byte with its content type and etag", async () => {
    const data = bytes(5000);
    const put = await store.put("site-media/a/one.png", data, { contentType: "image/png" });
    expect(put.size).toBe(5000);
    expect(put.etag).toMatch(/^".+"$/);
    const head = await store.head("site-media/a/one.png");
    expect(head).toMatchObject({ size: 5000, contentType: "image/png", etag: put.etag });
    const got = await store.get("site-media/a/one.png");
    expect(new Uint8Array(await new Response(got!.body).arrayBuffer())).toEqual(data);
  });

  test("put a stream of known size stores exactly those bytes", async () => {
    const data = bytes(64_000, 13);
    await store.put("site-media/a/stream.gif", streamOf(data), {
      contentType: "image/gif",
      size: data.length,
    });
    const got = await store.get("site-media/a/stream.gif");
    expect(new Uint8Array(await new Response(got!.body).arrayBuffer())).toEqual(data);
  });

  test("a stream without a size is stored within its cap; over the cap nothing is stored", async () => {
    const data = bytes(30_000, 5);
    await store.put("site-media/a/nosize.png", streamOf(data), {
      contentType: "image/png",
      maxBytes: 30_000,
    });
    const got = await store.get("site-media/a/nosize.png");
    expect(new Uint8Array(await new Response(got!.body).arrayBuffer())).toEqual(data);
    await expect(
      store.put("site-media/a/over.png", streamOf(data), { contentType: "image/png", maxBytes: 29_999 }),
    ).rejects.toMatchObject({ reason: "too_large" });
    expect(await store.head("site-media/a/over.png")).toBeNull();
  });

  test("get with a byte range streams only that range and reports the full size", async () => {
    const data = bytes(5000);
    await store.put("site-media/a/range.jpg", data, { contentType: "image/jpeg" });
    const got = await store.get("site-media/a/range.jpg", { range: { start: 100, end: 199 } });
    expect(got!.info.size).toBe(5000);
    expect(new Uint8Array(await new Response(got!.body).arrayBuffer())).toEqual(data.slice(100, 200));
  });

  test("missing objects: head and get answer null, delete is not an error", async () => {
    expect(await store.head("site-media/a/none.png")).toBeNull();
    expect(await store.get("site-media/a/none.png")).toBeNull();
    await store.delete("site-media/a/none.png");
  });

  test("delete removes an object", async () => {
    await store.put("site-media/a/gone.png", bytes(10), { contentType: "image/png" });
    await store.delete("site-media/a/gone.png");
    expect(await store.head("site-media/a/gone.png")).toBeNull();
  });

  test("list returns the objects under a prefix in key order, and nothing else", async () => {
    for (const k of ["site-media/l/b.png", "site-media/l/a.png", "site-media/lx/c.png"])
      await store.put(k, bytes(3), { contentType: "image/png" });
    const keys: string[] = [];
    for await (const o of store.list("site-media/l/")) keys.push(o.key);
    expect(keys).toEqual(["site-media/l/a.png", "site-media/l/b.png"]);
  });

  test("a key from a request never escapes the root: .., encoded forms, absolute paths, NUL", async () => {
    for (const key of [
      "../etc/passwd",
      "site-media/../../x",
      "/etc/passwd",
      "site-media/a/%2e%2e/x",
      "site-media/a/..%2fx",
      "site-media\\..\\x",
      "site-media/a/x\u0000.png",
      "site-media//x.png",
      "site-media/./x.png",
      ".meta/x.json",
      "",
    ]) {
      expect(isSafeKey(key)).toBe(false);
      await expect(store.put(key, bytes(1), { contentType: "image/png" })).rejects.toBeInstanceOf(StoreError);
      await expect(store.head(key)).rejects.toBeInstanceOf(StoreError);
      await expect(store.get(key)).rejects.toBeInstanceOf(StoreError);
    }
  });

  test("a presigned PUT accepts the signed bytes and refuses another content type or length", async () => {
    const data = bytes(2048);
    const key = "site-media/p/up.png";
    const signed = await store.presignPut(key, {
      contentType: "image/png",
      size: data.length,
      expiresInSeconds: 60,
    });
    expect(signed.method).toBe("PUT");
    expect(signed.headers).toEqual({ "Content-Type": "image/png" });
    if (store.receiveSignedPut) {
      const receive = store.receiveSignedPut.bind(store);
      const put = (body: Uint8Array, contentType: string, url = signed.url) =>
        receive(key, { searchParams: new URL(url).searchParams, contentType, body: streamOf(body) });
      await expect(put(data, "image/jpeg")).rejects.toMatchObject({ reason: "bad_content_type" });
      await expect(put(bytes(4096), "image/png")).rejects.toMatchObject({ reason: "size_mismatch" });
      await expect(put(bytes(1024), "image/png")).rejects.toMatchObject({ reason: "size_mismatch" });
      const forged = signed.url.replace("X-Size=2048", "X-Size=4096");
      await expect(put(bytes(4096), "image/png", forged)).rejects.toMatchObject({ reason: "bad_signature" });
      expect(await store.head(key)).toBeNull();
      await put(data, "image/png");
    } else {
      // S3 itself refuses other bytes because both headers are signed (s3rver does not verify SigV4).
      const signedHeaders = new URL(signed.url).searchParams.get("X-Amz-SignedHeaders") ?? "";
      expect(signedHeaders.split(";")).toEqual(expect.arrayContaining(["content-type", "content-length"]));
      const r = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: data });
      expect(r.status).toBe(200);
    }
    expect(await store.head(key)).toMatchObject({ size: 2048, contentType: "image/png" });
  });
});

describe("S3_PUBLIC_ENDPOINT", () => {
  test("presigned URLs name the public endpoint, and a PUT through it lands in the bucket", async () => {
    const s3 = await startTestS3();
    // The same s3rver, reached by another name: what a proxy or a published port looks like to clients.
    const publicEndpoint = s3.options.endpoint!.replace("127.0.0.1", "localhost");
    const store = openS3Store({ ...s3.options, publicEndpoint });
    const internal = openS3Store(s3.options);
    try {
      const data = bytes(512);
      const key = "site-media/p/public.png";
      const signed = await store.presignPut(key, {
        contentType: "image/png",
        size: data.length,
        expiresInSeconds: 60,
      });
      expect(signed.url).toStartWith(`${publicEndpoint}/${s3.options.bucket}/${key}?`);
      const plain = await internal.presignPut(key, {
        contentType: "image/png",
        size: 1,
        expiresInSeconds: 60,
      });
      expect(plain.url).toStartWith(`${s3.options.endpoint}/`);
      const r = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: data });
      expect(r.status).toBe(200);
      // The service itself still talks to the internal endpoint.
      expect(await store.head(key)).toMatchObject({ size: 512, contentType: "image/png" });
    } finally {
      await store.close();
      await internal.close();
      await s3.stop();
    }
  });
});
