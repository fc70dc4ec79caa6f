import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFsStore } from "./fs_store.ts";
import { StoreError } from "./object_store.ts";

// The local-disk store's free-space floor (STORAGE_MIN_FREE_BYTES, decision 0831) counts the bytes a
// write brings when it knows them: a body given whole (a clip's MP4 and poster, a generated image) is
// refused when it would leave less than the floor, not only once the disk is already below it (issue 38:
// the MP4 went through at "0 bytes" and took the disk under its floor).

const root = mkdtempSync(join(tmpdir(), "fs-floor-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const free = () => {
  const fs = statfsSync(root);
  return fs.bavail * fs.bsize;
};
const MIB = 1024 * 1024;

describe("the local-disk store's free-space floor", () => {
  test("a whole body that would cross the floor is refused as full; one that fits lands", async () => {
    // 32 MiB of room above the floor (other processes on this disk move it by far less meanwhile).
    const store = openFsStore({
      root,
      publicBaseUrl: "http://localhost",
      secretKey: "k".repeat(32),
      maxPutBytes: 128 * MIB,
      minFreeBytes: free() - 32 * MIB,
    });
    const err = await store
      .put("social-media/o/big.mp4", new Uint8Array(64 * MIB), { contentType: "video/mp4" })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe("full");
    expect(await store.head("social-media/o/big.mp4")).toBeNull();
    await store.put("social-media/o/small.jpg", new Uint8Array(1024), { contentType: "image/jpeg" });
    expect((await store.head("social-media/o/small.jpg"))?.size).toBe(1024);
  });
});
