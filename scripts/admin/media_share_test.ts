import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, systemClock } from "@site/config";
import { type DbHandle, sites } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { createOrganization } from "@site/domain/core";
import { addLibraryFile, type MediaContext, readShareToken } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { openFsStore } from "@site/storage";

const SECRET = "media-share-test-secret-0123456789";
let db: DbHandle;
let dataDir: string;
let ctx: MediaContext;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  dataDir = mkdtempSync(join(tmpdir(), "media-share-"));
  const config = loadConfig({
    SECRET_KEY: SECRET,
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: "https://media.example.test",
  });
  const store = openFsStore({
    root: join(dataDir, "objects"),
    publicBaseUrl: config.publicBaseUrl,
    secretKey: SECRET,
  });
  ctx = { config, db: db.db, clock: systemClock, log: createLogger("error"), store };
});
afterAll(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ROOT = new URL("../..", import.meta.url).pathname;
async function admin(...args: string[]) {
  const proc = Bun.spawn(["bun", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      SECRET_KEY: SECRET,
      PUBLIC_BASE_URL: "https://media.example.test",
      LOG_LEVEL: "error",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, json: code === 0 ? JSON.parse(stdout) : null };
}

describe("bun run admin media:share", () => {
  test("prints {url}: a share-token delivery URL that opens that one path until it expires", async () => {
    const org = await createOrganization(ctx, { name: "Share" });
    const [site] = await db.db
      .insert(sites)
      .values({ orgId: org.id, name: "S", slug: `share-${Date.now()}` })
      .returning();
    const file = await addLibraryFile(ctx, { siteId: site!.id, bytes: sampleImage("png"), source: "upload" });
    const out = await admin("media:share", "--site", site!.id, "--key", file.key, "--expires-in", "120");
    expect(out.code).toBe(0);
    expect(Object.keys(out.json)).toEqual(["url"]);
    const url = new URL(out.json.url);
    expect(`${url.origin}${url.pathname}`).toBe(`https://media.example.test${file.url}`);
    const t = url.searchParams.get("t")!;
    expect(readShareToken(ctx, file.key, t)).toEqual({ siteId: site!.id });
    expect(readShareToken(ctx, `site-media/${site!.id}/other.png`, t)).toBeNull();
    const exp = Number(t.split(".")[1]);
    expect(exp * 1000 - Date.now()).toBeLessThanOrEqual(121_000);

    expect(
      (await admin("media:share", "--site", site!.id, "--key", `site-media/${site!.id}/none.png`)).code,
    ).toBe(1);
    expect((await admin("media:share", "--site", site!.id)).code).toBe(1);
  });
});
