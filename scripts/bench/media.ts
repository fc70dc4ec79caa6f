/**
 * Media benchmark (run by hand: `bun scripts/bench/media.ts`; needs the PostgreSQL of TEST_DATABASE_URL).
 * Prints: list latency at 10,000 files (first vs last page), delivery throughput of a 10 MB file through
 * the route vs Bun.file served directly, and peak memory growth while importing and serving 10 MB files.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTestApp } from "@site/api/testing";
import { mediaFiles } from "@site/db";
import { createUserSession, encodeCursor } from "@site/domain/core";
import { grantMemberUrl, listLibrary } from "@site/domain/media";
import { siteById } from "@site/domain/sites";
import { createTlsFixture } from "@site/net/testing";
import { openFsStore } from "@site/storage";
import { desc, eq, sql } from "drizzle-orm";

const FILES = 10_000;
const TEN_MB = 10 * 1024 * 1024 - 4096;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

const tls = createTlsFixture();
const root = mkdtempSync(join(tmpdir(), "bench-media-"));
// The remote image server runs in its own process, so its buffers do not count as the API's memory.
writeFileSync(join(root, "cert.pem"), tls.cert);
writeFileSync(join(root, "key.pem"), tls.key);
const fixtureProc = Bun.spawn(
  [
    "bun",
    join(import.meta.dir, "_media_fixture.ts"),
    join(root, "cert.pem"),
    join(root, "key.pem"),
    String(TEN_MB),
  ],
  { stdout: "pipe", stderr: "inherit" },
);
const firstLine = async (stream: ReadableStream<Uint8Array>) => {
  let text = "";
  const reader = stream.getReader();
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.trim();
};
const fixture = { port: Number(await firstLine(fixtureProc.stdout)) };

const store = openFsStore({ root, publicBaseUrl: "http://127.0.0.1", secretKey: "bench-secret-0123456789" });
const h = await buildTestApp({
  store,
  fetchTls: { ca: tls.ca },
  env: { FETCH_ALLOW_HOSTS: `localhost:${fixture.port}`, IMPORT_TIMEOUT_MS: "60000" },
});
const owner = await h.seedOrg({ siteLimit: 10 });
const siteRes = await h.call("POST", "/api/v1/sites", {
  key: owner.key,
  body: { name: "Bench", slug: `bench-${Date.now()}` },
});
const siteId = ((await siteRes.json()) as { site: { id: string } }).site.id;

try {
  // 1. List latency, keyset: the first and the last page of 10,000 files.
  console.log(`seeding ${FILES} library rows…`);
  await h.db.execute(sql`
    insert into media_files (site_id, key, name, content_type, size, source, created_at)
    select ${siteId}::uuid, 'site-media/' || ${siteId} || '/f' || g || '.png', 'f' || g || '.png', 'image/png', 1000, 'upload',
           now() - (g || ' seconds')::interval
    from generate_series(1, ${FILES}) g`);
  await h.db.execute(sql`analyze media_files`);
  const [edge] = await h.db
    .select({ id: mediaFiles.id, at: sql<string>`${mediaFiles.createdAt}::text` })
    .from(mediaFiles)
    .where(eq(mediaFiles.siteId, siteId))
    .orderBy(desc(mediaFiles.createdAt), desc(mediaFiles.id))
    .offset(FILES - 51)
    .limit(1);
  const lastCursor = encodeCursor(edge!);
  // Alternate first and last page request by request, so a busy machine slows both alike.
  const site = await siteById(h.ctx, siteId);
  const once = async (cursor?: string) => {
    const t0 = performance.now();
    const page = await listLibrary(h.ctx, site, { cursor, limit: 50 });
    if (page.images.length === 0) throw new Error("empty page");
    return performance.now() - t0;
  };
  const firstRuns: number[] = [];
  const lastRuns: number[] = [];
  for (let i = 0; i < 60; i++) {
    firstRuns.push(await once());
    lastRuns.push(await once(lastCursor));
  }
  const first = median(firstRuns.slice(10));
  const last = median(lastRuns.slice(10));
  console.log(
    `list, 10,000 files, limit 50: first page ${first.toFixed(2)} ms, last page ${last.toFixed(2)} ms, ratio last/first ${(last / first).toFixed(2)} (target < 1.5)`,
  );

  // 2. Delivery throughput of a 10 MB file: the route vs Bun.file served directly.
  const imported = await h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, {
    key: owner.key,
    body: { url: `https://localhost:${fixture.port}/big.png`, alt: "bench" },
  });
  const { path } = (await imported.json()) as { path: string };
  h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const api = `http://127.0.0.1:${h.app.server!.port}`;
  const { cookie } = await createUserSession(h.ctx, owner.user.id);
  const [row] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.key, path));
  const direct = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(Bun.file(join(root, path))),
  });
  // Alternate the two servers request by request, so a busy machine slows both alike.
  const read = async (url: string) => {
    const t0 = performance.now();
    const n = (await (await fetch(url)).arrayBuffer()).byteLength;
    if (n !== row!.size) throw new Error(`short read ${n}`);
    return n / 1024 / 1024 / ((performance.now() - t0) / 1000);
  };
  const routeUrl = `${api}${grantMemberUrl(h.ctx, siteId, path)}`;
  const directUrl = `http://127.0.0.1:${direct.port}/`;
  const routeRuns: number[] = [];
  const fileRuns: number[] = [];
  for (let i = 0; i < 40; i++) {
    routeRuns.push(await read(routeUrl));
    fileRuns.push(await read(directUrl));
  }
  const viaRoute = median(routeRuns.slice(5));
  const viaFile = median(fileRuns.slice(5));
  console.log(
    `delivery of ${mb(row!.size)} MB: route ${viaRoute.toFixed(0)} MB/s, Bun.file direct ${viaFile.toFixed(0)} MB/s, ratio ${(viaRoute / viaFile).toFixed(2)} (target >= 0.7)`,
  );
  direct.stop(true);

  // 3. Peak memory growth while importing and serving 10 MB files (the downloader is curl, outside).
  const round = async (i: number) => {
    const r = await h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, {
      key: owner.key,
      body: { url: `https://localhost:${fixture.port}/big-${i}.png` },
    });
    if (r.status !== 201) throw new Error(`import ${r.status} ${await r.text()}`);
    const curl = Bun.spawn([
      "curl",
      "-sS",
      "-o",
      "/dev/null",
      "-H",
      `cookie: ${cookie}`,
      `${api}/api/media/${path}`,
    ]);
    if ((await curl.exited) !== 0) throw new Error("curl failed");
  };
  await round(-1); // warm-up: first TLS handshake, code paths compiled
  Bun.gc(true);
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 2);
  await round(0);
  const afterOne = peak;
  for (let i = 1; i < 5; i++) await round(i);
  clearInterval(sampler);
  console.log(
    `peak RSS growth, 10 MB files: one import + delivery ${mb(afterOne - base)} MB; five of each ${mb(peak - base)} MB (target < 30 MB)`,
  );
} finally {
  await h.app.stop(true).catch(() => {});
  fixtureProc.kill();
  await h.close();
  rmSync(root, { recursive: true, force: true });
}
