import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DbHandle, organizations, socialMedia } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { createOrganization } from "@site/domain/core";
import { type MediaContext, sweepMedia } from "@site/domain/media";
import { testContext } from "@site/domain/testing";
import { type ObjectStore, openFsStore, openS3Store } from "@site/storage";
import { failingStore, startTestS3, type WriteFault } from "@site/storage/testing";
import { eq } from "drizzle-orm";
import { addClipToLibrary } from "./clips.ts";

// Issue 38, "Bytes without a row": a clip whose MP4 landed and whose poster did not (the store filled
// between the two writes) left the MP4 under social-media/<org>/ with no row, outside the quota, for good.
// Now the failed try removes what it wrote, and the orphan walk of the media sweeper removes any object
// of either library that no row claims once it is an hour old (decision 1421). On both storage drivers:
// local files and S3 (s3rver), with a clock the test moves.

type Driver = {
  name: "fs" | "s3";
  full: WriteFault;
  open(): Promise<{ store: ObjectStore; close(): Promise<void> }>;
};
const drivers: Driver[] = [
  {
    name: "fs",
    full: "ENOSPC",
    async open() {
      const root = mkdtempSync(join(tmpdir(), "clip-storage-"));
      const store = openFsStore({ root, publicBaseUrl: "http://localhost", secretKey: "k".repeat(32) });
      return { store, close: async () => rmSync(root, { recursive: true, force: true }) };
    },
  },
  {
    name: "s3",
    // MinIO's "storage full", as the S3 driver maps it.
    full: { s3Status: 507 },
    async open() {
      const s3 = await startTestS3();
      const store = openS3Store(s3.options);
      return {
        store,
        close: async () => {
          await store.close();
          await s3.stop();
        },
      };
    },
  },
];

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(() => handle.close());

/** Every key under `prefix`. */
async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out.sort();
}

const usedOf = async (orgId: string) =>
  (await handle.db.select().from(organizations).where(eq(organizations.id, orgId)))[0]!.storageUsedBytes;

const CLIP = {
  video: new Uint8Array(62_000).fill(7),
  poster: new Uint8Array(9_000).fill(9),
  width: 1080,
  height: 1350,
  baseName: "clip-example.test",
};

describe.each(drivers)("clip bytes and rows agree on the $name driver", (driver) => {
  let store: ObjectStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await driver.open());
  });
  afterAll(() => close());

  /** A context whose clock reads `now()`, on this driver's store (wrapped by `wrap`). */
  const ctxAt = (now: () => Date, s: ObjectStore = store): MediaContext => ({
    ...testContext(handle.db, { now }),
    store: s,
  });

  test("the store full between the MP4 and the poster: the try fails and removes the MP4; no row, no bytes counted", async () => {
    const org = await createOrganization(testContext(handle.db), { name: `Clip ${driver.name}` });
    // The store fills once the MP4 has landed: the poster's write is refused as a full disk/bucket's is.
    const filling = failingStore(store, null);
    const wrapped: ObjectStore = {
      ...filling,
      driver: store.driver,
      async put(key, body, o) {
        const out = await filling.put(key, body, o);
        if (key.endsWith(".mp4")) filling.setFault(driver.full);
        return out;
      },
    };
    const ctx = ctxAt(() => new Date(), wrapped);
    const err = await addClipToLibrary(ctx, org.id, CLIP).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(filling.writesRefused).toBe(1);
    expect(await keysUnder(store, `social-media/${org.id}/`)).toEqual([]);
    expect(await handle.db.select().from(socialMedia).where(eq(socialMedia.orgId, org.id))).toEqual([]);
    expect(await usedOf(org.id)).toBe(0);
    // Room again: the next try lists both, counted once.
    filling.setFault(null);
    const ok = await addClipToLibrary(
      ctxAt(() => new Date()),
      org.id,
      CLIP,
    );
    expect(await keysUnder(store, `social-media/${org.id}/`)).toEqual([ok.videoKey, ok.posterKey].sort());
    expect(await usedOf(org.id)).toBe(CLIP.video.byteLength + CLIP.poster.byteLength);
  });

  test("the orphan walk removes social and site objects no row claims once an hour old, and nothing claimed", async () => {
    const org = await createOrganization(testContext(handle.db), { name: `Orphans ${driver.name}` });
    const listed = await addClipToLibrary(
      ctxAt(() => new Date()),
      org.id,
      CLIP,
    );
    // What a process killed between its write and its row leaves behind (and a rejected upload's bytes).
    const stray = `social-media/${org.id}/clip-left-behind.mp4`;
    await store.put(stray, new Uint8Array(62_000), { contentType: "video/mp4" });
    const rejected = `social-media/${org.id}/rejected.png`;
    await store.put(rejected, new Uint8Array(100), { contentType: "image/png" });
    await handle.db.insert(socialMedia).values({
      orgId: org.id,
      key: rejected,
      kind: "image",
      contentType: "image/png",
      size: 100,
      source: "upload",
      status: "rejected",
      createdAt: new Date(),
    });
    const siteStray = `site-media/${crypto.randomUUID()}/left-behind.png`;
    await store.put(siteStray, new Uint8Array(50), { contentType: "image/png" });
    const t0 = Date.now();
    const sweepAt = (ms: number) =>
      sweepMedia(
        ctxAt(() => new Date(t0 + ms)),
        { orphans: true },
      );

    // 59 minutes on: too young, all kept.
    expect((await sweepAt(59 * 60_000)).orphansRemoved).toBe(0);
    expect(await keysUnder(store, `social-media/${org.id}/`)).toHaveLength(4);
    // An hour and a minute on: the unclaimed ones go; the clip and its poster stay.
    expect((await sweepAt(61 * 60_000)).orphansRemoved).toBeGreaterThanOrEqual(3);
    expect(await keysUnder(store, `social-media/${org.id}/`)).toEqual(
      [listed.videoKey, listed.posterKey].sort(),
    );
    expect(await store.head(siteStray)).toBeNull();
  });
});
