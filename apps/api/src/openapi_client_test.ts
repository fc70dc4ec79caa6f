import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sampleImage } from "@site/domain/testing";
import openapiTS, { astToString } from "openapi-typescript";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

const ROOT = resolve(import.meta.dir, "..", "..", "..");

// What a client developer writes against the generated types: every call is checked by tsc, and the
// expected-error line proves the types are real (with `any` the directive is unused, which tsc rejects).
const PROGRAM = `import createClient from "openapi-fetch";
import type { components, paths } from "./api.ts";

const env = process.env as Record<string, string>;
const client = createClient<paths>({ baseUrl: env.BASE, headers: { authorization: \`Bearer \${env.KEY}\` } });

const created = await client.POST("/api/v1/sites", { body: { name: "Client Bakery", slug: env.SLUG } });
if (!created.data) throw new Error(\`create site: \${JSON.stringify(created.error)}\`);
const siteId: string = created.data.site.id;
// @ts-expect-error a site has no such field
created.data.site.nonexistent;

const png = await Bun.file(env.PNG).bytes();
const prepared = await client.POST("/api/v1/sites/{siteId}/media/upload", {
  params: { path: { siteId } },
  body: { contentType: "image/png", size: png.length },
});
if (!prepared.data) throw new Error(\`prepare upload: \${JSON.stringify(prepared.error)}\`);
const expires: number = prepared.data.upload.expiresInSeconds;
const put = await fetch(prepared.data.upload.url, {
  method: prepared.data.upload.method,
  headers: prepared.data.upload.headers,
  body: png,
});
if (!put.ok) throw new Error(\`PUT: \${put.status} \${await put.text()}\`);

const listed = await client.GET("/api/v1/sites/{siteId}/media", { params: { path: { siteId } } });
if (!listed.data) throw new Error("list media");
const sizes: number[] = listed.data.images.map((i) => i.size);
// The domain's models are named types of the client (components), the answers typed by them.
const page: components["schemas"]["MediaLibraryPage"] = listed.data;
const instructions: components["schemas"]["SignedUpload"] = prepared.data.upload;
const firstImage: components["schemas"]["MediaImage"] | undefined = page.images[0];
void instructions;
void firstImage;

const estimate = await client.POST("/api/v1/sites/{siteId}/media/screenshot", {
  params: { path: { siteId } },
  body: { url: "https://example.com/pricing", estimateOnly: true },
});
if (!estimate.data) throw new Error(\`estimate: \${JSON.stringify(estimate.error)}\`);
const queued = await client.POST("/api/v1/sites/{siteId}/media/screenshot", {
  params: { path: { siteId } },
  body: { url: "https://example.com/pricing", styleId: "laptop-studio", theme: "dark" },
});
// The answer is a union on \`estimate\`: narrowing it is what gives the render's id its type.
if (!queued.data || queued.data.estimate) throw new Error(\`queue: \${JSON.stringify(queued.error)}\`);
const poll = await client.GET("/api/v1/sites/{siteId}/media/screenshot/{renderId}", {
  params: { path: { siteId, renderId: queued.data.renderId } },
});
const status: "pending" | "done" | "failed" | undefined = poll.data?.status;

const report = await client.GET("/api/v1/social/performance");
if (!report.data) throw new Error("report");

const refused = await client.POST("/api/v1/sites", { body: { name: "Again", slug: env.SLUG } });
// The error type names the codes this route can answer.
const code: string | undefined = refused.error?.error.code;

console.log(JSON.stringify({
  siteId, expires, sizes, credits: estimate.data.credits, queuedStatus: queued.response.status,
  status, posts: report.data.posts.length, refusedStatus: refused.response.status, code,
}));
`;

let h: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let dir: string;

beforeAll(async () => {
  // Listen first, so the app's public base (upload URLs, the document's server) is this address.
  let handle: (req: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => handle(req) });
  base = `http://127.0.0.1:${server.port}`;
  h = await buildTestApp({ env: { PUBLIC_BASE_URL: base } });
  handle = (req) => h.app.handle(req);
  dir = mkdtempSync(join(tmpdir(), "openapi-client-"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
});
afterAll(async () => {
  server.stop(true);
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a TypeScript client generated from the live document", () => {
  test("openapi-typescript generates it, tsc accepts a program against it, and the program runs", async () => {
    const doc = await (await fetch(`${base}/swagger/json`)).json();
    writeFileSync(join(dir, "api.ts"), astToString(await openapiTS(doc as never)));
    writeFileSync(join(dir, "program.ts"), PROGRAM);
    writeFileSync(join(dir, "hero.png"), sampleImage("png", { width: 64, height: 40, size: 2048 }));

    const tsc = Bun.spawnSync(
      [
        process.execPath,
        join(ROOT, "node_modules", "typescript", "bin", "tsc"),
        "--noEmit",
        "--strict",
        "--target",
        "es2022",
        "--module",
        "esnext",
        "--moduleResolution",
        "bundler",
        "--allowImportingTsExtensions",
        "--skipLibCheck",
        "--types",
        "bun-types",
        "--lib",
        "es2023,dom",
        join(dir, "program.ts"),
      ],
      { cwd: dir, stdout: "pipe", stderr: "pipe" },
    );
    expect(`${tsc.stdout}${tsc.stderr}`).toBe("");
    expect(tsc.exitCode).toBe(0);

    const { key } = await h.seedOrg({ credits: 50 });
    // Async: the server answering the program runs in this process.
    const run = Bun.spawn([process.execPath, join(dir, "program.ts")], {
      cwd: dir,
      env: { ...process.env, BASE: base, KEY: key, SLUG: `client-${Date.now()}`, PNG: join(dir, "hero.png") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(run.stdout).text(),
      new Response(run.stderr).text(),
      run.exited,
    ]);
    expect(stderr).toBe("");
    expect(exitCode).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({
      expires: 7200,
      sizes: [2048],
      credits: 10,
      queuedStatus: 202,
      status: "pending",
      posts: 0,
      refusedStatus: 409,
      code: "SLUG_TAKEN",
    });
  }, 120_000);
});
