import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApi } from "@site/api";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { readServerRecord } from "@site/config";
import { sites } from "@site/db";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";

// The walk-through's promise: start the server on any PORT, and the CLI's links follow without being told.
const SECRET = "public-base-test-secret-0123456789";
const ROOT = new URL("../..", import.meta.url).pathname;
let h: TestApp;
let dataDir: string;
let api: { url: string; stop(): Promise<void> };
let port: number;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "public-base-"));
  port = await freePort();
  h = await buildTestApp({ env: { SECRET_KEY: SECRET, DATA_DIR: dataDir, PORT: String(port) } });
  api = startApi(runtimeOf(h));
});
afterAll(async () => {
  await api.stop();
  await h.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function admin(...args: string[]) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: h.databaseUrl,
    DATA_DIR: dataDir,
    SECRET_KEY: SECRET,
    LOG_LEVEL: "error",
  };
  delete env.PUBLIC_BASE_URL;
  delete env.PORT;
  const proc = Bun.spawn(["bun", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, json: code === 0 ? JSON.parse(stdout) : null };
}

describe("the public base comes from one place: what the running server recorded in DATA_DIR", () => {
  test("the server records it; server:info and media:share use it with no PORT or PUBLIC_BASE_URL", async () => {
    const base = `http://127.0.0.1:${port}`;
    expect(readServerRecord(dataDir)).toMatchObject({ publicBaseUrl: base, url: base, running: true });

    const info = await admin("server:info");
    expect(info.code).toBe(0);
    expect(info.json).toMatchObject({ publicBaseUrl: base, url: base, running: true });

    const org = await h.seedOrg();
    const [site] = await h.db
      .insert(sites)
      .values({ orgId: org.org.id, name: "S", slug: `base-${Date.now()}` })
      .returning();
    const file = await addLibraryFile(h.ctx, {
      siteId: site!.id,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const share = await admin("media:share", "--site", site!.id, "--key", file.key);
    expect(share.code).toBe(0);
    expect(share.json.url).toStartWith(`${base}${file.url}?t=`);
    const res = await fetch(share.json.url);
    expect(res.status).toBe(200);
  }, 60_000);
});
