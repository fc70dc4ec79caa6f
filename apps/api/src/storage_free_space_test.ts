import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { mediaFiles } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

type Json = any;

/** Free bytes of the disk the test stores live on (the harness keeps them under the temp dir). */
function freeBytes(): number {
  const fs = statfsSync(tmpdir());
  return fs.bavail * fs.bsize;
}

describe("readiness follows the writes' free-space threshold (STORAGE_MIN_FREE_BYTES)", () => {
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  beforeAll(async () => {
    // More free space asked for than the disk has: every write is refused as full.
    const threshold = freeBytes() + 1024 ** 4;
    h = await buildTestApp({ env: { STORAGE_MIN_FREE_BYTES: String(threshold), RETRY_AFTER_SECONDS: "3" } });
    owner = await h.seedOrg();
  });
  afterAll(async () => {
    await h.close();
  });

  test("below the threshold a signed upload is refused 503 (storage full) and /readyz answers 503 naming storage", async () => {
    const site = await h.newSite(owner.key);
    const bytes = sampleImage("png", { size: 2000 });
    const prep = (await (
      await h.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
        key: owner.key,
        body: { contentType: "image/png", size: bytes.byteLength },
      })
    ).json()) as Json;
    const url = new URL(prep.upload.url);
    const put = await h.app.handle(
      new Request(`http://localhost${url.pathname}${url.search}`, {
        method: "PUT",
        headers: prep.upload.headers,
        body: bytes,
      }),
    );
    const putBody = (await put.json()) as Json;
    expect({
      status: put.status,
      code: putBody.error.code,
      dependency: putBody.error.details.dependency,
    }).toEqual({ status: 503, code: "SERVICE_UNAVAILABLE", dependency: "storage" });
    expect(putBody.error.message).toMatch(/^File storage is full right now/);
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toEqual([]);

    const ready = await h.call("GET", "/readyz");
    const body = (await ready.json()) as Json;
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBe("3");
    expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
    expect(body.error.details.notReady).toEqual(["storage"]);
    expect(body.error.details.checks.storage.reason).toBe("full: cannot take writes");
    expect(body.error.details.checks.database.ok).toBe(true);
  });

  test("with the default threshold (far below the free space) the same writes land and /readyz is 200", async () => {
    const roomy = await buildTestApp();
    try {
      expect(roomy.ctx.config.storageMinFreeBytes).toBe(64 * 1024 * 1024);
      const o = await roomy.seedOrg();
      const site = await roomy.newSite(o.key);
      const bytes = sampleImage("png", { size: 2000 });
      const prep = (await (
        await roomy.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
          key: o.key,
          body: { contentType: "image/png", size: bytes.byteLength },
        })
      ).json()) as Json;
      const url = new URL(prep.upload.url);
      const put = await roomy.app.handle(
        new Request(`http://localhost${url.pathname}${url.search}`, {
          method: "PUT",
          headers: prep.upload.headers,
          body: bytes,
        }),
      );
      expect(put.status).toBeLessThan(300);
      expect((await roomy.call("GET", "/readyz")).status).toBe(200);
    } finally {
      await roomy.close();
    }
  });
});
