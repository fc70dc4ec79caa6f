import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { cloneSourceFiles, type DbHandle, mediaFiles, sites } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { type Context, createOrganization } from "@site/domain/core";
import { testContext } from "@site/domain/testing";
import { filesOfSite } from "./site_files.ts";

// filesOfSite (decision 0610), on a real PostgreSQL: the one answer to "may this site use (and have
// signed) this file": its own library's files, and for a clone the host files its copied content
// carried (clone_source_files), nothing else. Also a focused test StrykerJS runs for site_files.ts
// (docs/mutation/grants.md).

let handle: DbHandle;
let ctx: Context;
beforeAll(async () => {
  handle = await createTestDatabase();
  ctx = testContext(handle.db);
});
afterAll(() => handle.close());

async function site(): Promise<string> {
  const org = await createOrganization(ctx, { name: `Files ${randomUUID().slice(0, 6)}` });
  const slug = `files-${randomUUID().slice(0, 8)}`;
  const [row] = await handle.db.insert(sites).values({ orgId: org.id, name: slug, slug }).returning();
  return row!.id;
}
/** Files in the library of `siteId`; their keys. */
async function library(siteId: string, ...names: string[]): Promise<string[]> {
  const keys = names.map((n) => `site-media/${siteId}/${n}`);
  await handle.db.insert(mediaFiles).values(
    keys.map((key, i) => ({
      siteId,
      key,
      name: names[i]!,
      contentType: "image/png",
      size: 10,
      source: "upload" as const,
    })),
  );
  return keys;
}
const carry = (cloneId: string, keys: string[]) =>
  handle.db.insert(cloneSourceFiles).values(keys.map((key) => ({ siteId: cloneId, key })));
const sorted = (s: Set<string>) => [...s].sort();

describe("filesOfSite", () => {
  test("a site's own library files, of those asked for; another site's files and unknown keys are not", async () => {
    const a = await site();
    const b = await site();
    const [a1, a2, a3] = await library(a, "1.png", "2.png", "3.png");
    const [b1] = await library(b, "1.png");
    const unknown = `site-media/${a}/missing.png`;
    expect(sorted(await filesOfSite(ctx, a, [a1!, a2!, b1!, unknown]))).toEqual([a1!, a2!].sort());
    // Only what was asked: a3 is a's too, but not asked for.
    expect(sorted(await filesOfSite(ctx, a, [a3!]))).toEqual([a3!]);
    expect(sorted(await filesOfSite(ctx, b, [a1!, a2!, a3!, b1!]))).toEqual([b1!]);
    expect(sorted(await filesOfSite(ctx, a, [b1!]))).toEqual([]);
  });

  test("a clone's carried host files count for the clone only; the host's other files do not", async () => {
    const host = await site();
    const clone = await site();
    const other = await site();
    const [carried, kept, later] = await library(host, "carried.png", "kept.png", "later.png");
    const [own] = await library(clone, "own.png");
    await carry(clone, [carried!]);
    const all = [carried!, kept!, later!, own!];
    expect(sorted(await filesOfSite(ctx, clone, all))).toEqual([carried!, own!].sort());
    // Asked for the carried file alone, and for the own file alone: each on its own side of the union.
    expect(sorted(await filesOfSite(ctx, clone, [carried!]))).toEqual([carried!]);
    expect(sorted(await filesOfSite(ctx, clone, [own!]))).toEqual([own!]);
    // The host keeps its files; another site gets none of them, nor the clone's.
    expect(sorted(await filesOfSite(ctx, host, all))).toEqual([carried!, kept!, later!].sort());
    expect(sorted(await filesOfSite(ctx, other, all))).toEqual([]);
  });

  test("a carried file counts only when asked for; another clone's carried files do not count", async () => {
    const host = await site();
    const clone = await site();
    const clone2 = await site();
    const [c1, c2, c3] = await library(host, "c1.png", "c2.png", "c3.png");
    await carry(clone, [c1!, c2!]);
    await carry(clone2, [c3!]);
    expect(sorted(await filesOfSite(ctx, clone, [c1!]))).toEqual([c1!]);
    expect(sorted(await filesOfSite(ctx, clone, [c3!]))).toEqual([]);
    expect(sorted(await filesOfSite(ctx, clone2, [c1!, c2!, c3!]))).toEqual([c3!]);
  });

  test("each key once, whatever the repeats; nothing asked, nothing answered", async () => {
    const a = await site();
    const [a1] = await library(a, "1.png");
    const got = await filesOfSite(ctx, a, [a1!, a1!, a1!]);
    expect(got).toBeInstanceOf(Set);
    expect(sorted(got)).toEqual([a1!]);
    expect(sorted(await filesOfSite(ctx, a, new Set([a1!])))).toEqual([a1!]);
    expect(sorted(await filesOfSite(ctx, a, []))).toEqual([]);
  });
});
