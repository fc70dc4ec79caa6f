import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { idempotencyKeys, mediaFiles, organizations, pages, sites } from "@site/db";
import { createApiKey, sweepIdempotencyKeys } from "@site/domain/core";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { openFsStore } from "@site/storage";
import { failingStore } from "@site/storage/testing";
import { eq, sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 10);

// An HTTPS fixture for imports: an image, and one that answers only when the test lets it.
let tls: TlsFixture;
let fixture: ReturnType<typeof Bun.serve>;
const held: (() => void)[] = [];
let arrivals = 0;
beforeAll(() => {
  tls = createTlsFixture();
  fixture = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch(req) {
      arrivals++;
      if (new URL(req.url).pathname === "/held.png") await new Promise<void>((r) => held.push(r));
      return new Response(sampleImage("png", { width: 8, height: 8, size: 2000 }));
    },
  });
});
afterAll(() => {
  for (const r of held) r();
  fixture.stop(true);
});

describe("Idempotency-Key on POST (Stripe's semantics, decision 0832)", () => {
  let root: string;
  let store: ReturnType<typeof failingStore>;
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  let origin: string;
  beforeAll(async () => {
    origin = `https://localhost:${fixture.port}`;
    root = mkdtempSync(join(tmpdir(), "idempotency-"));
    store = failingStore(
      openFsStore({ root, publicBaseUrl: "http://127.0.0.1:3000", secretKey: "test-secret-key-0123456789" }),
      null,
    );
    h = await buildTestApp({
      store,
      fetchTls: { ca: tls.ca },
      env: { FETCH_ALLOW_HOSTS: `localhost:${fixture.port}`, IMPORT_TIMEOUT_MS: "10000" },
    });
    owner = await h.seedOrg({ siteLimit: 50 });
  });
  afterAll(async () => {
    await h.close();
    rmSync(root, { recursive: true, force: true });
  });

  const post = (
    path: string,
    body: unknown,
    key: string,
    o: { as?: string; headers?: Record<string, string> } = {},
  ) =>
    h.call("POST", path, { key: o.as ?? owner.key, body, headers: { "idempotency-key": key, ...o.headers } });
  // Pages written by the requests under test (a new site starts with its home page).
  const pageCount = async (siteId: string) =>
    (await h.db.select({ path: pages.path }).from(pages).where(eq(pages.siteId, siteId))).filter(
      (p) => p.path !== "/",
    ).length;
  const read = async (res: Response) => ({
    status: res.status,
    replayed: res.headers.get("idempotent-replayed"),
    type: res.headers.get("content-type"),
    text: await res.text(),
  });

  test("the same key and body answers the first answer again, and the page is written once", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const body = { path: "/about", title: "About", content: "# About us" };
    const first = await read(await post(`/api/v1/sites/${site.id}/pages`, body, key));
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const again = await post(`/api/v1/sites/${site.id}/pages`, body, key);
    const second = await read(again);
    expect(second).toEqual({ ...first, replayed: "true" });
    expect(again.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await pageCount(site.id)).toBe(1);
    // The same body spelled with other whitespace is the same request.
    const spaced = await read(
      await h.call("POST", `/api/v1/sites/${site.id}/pages`, {
        key: owner.key,
        body: JSON.stringify(body, null, 2),
        headers: { "idempotency-key": key },
      }),
    );
    expect(spaced.replayed).toBe("true");
    expect(await pageCount(site.id)).toBe(1);
  });

  test("the same key with another body, path or method answers 409 CONFLICT in the contract's body; nothing is written", async () => {
    const site = await h.newSite(owner.key);
    const other = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    expect(
      (await post(`/api/v1/sites/${site.id}/pages`, { path: "/a", title: "A", content: "" }, key)).status,
    ).toBe(201);
    for (const [path, body] of [
      [`/api/v1/sites/${site.id}/pages`, { path: "/b", title: "B", content: "" }],
      [`/api/v1/sites/${other.id}/pages`, { path: "/a", title: "A", content: "" }],
    ] as const) {
      const res = await post(path, body, key);
      const json = (await res.json()) as Json;
      expect(res.status).toBe(409);
      expect(json.error.code).toBe("CONFLICT");
      expect(json.error.message).toMatch(/^Idempotency-Key: this key was already used with another request/);
      expect(json.error.details).toEqual([
        { field: "Idempotency-Key", message: "used with another request" },
      ]);
    }
    expect(await pageCount(site.id)).toBe(1);
    expect(await pageCount(other.id)).toBe(0);
  });

  test("a retry while the first request still runs answers 409 (with Retry-After); once it ends, its answer is replayed", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const body = { url: `${origin}/held.png`, alt: "held" };
    const waiting = held.length;
    const first = post(`/api/v1/sites/${site.id}/media/import-url`, body, key);
    const deadline = Date.now() + 10_000;
    while (held.length === waiting && Date.now() < deadline) await Bun.sleep(10);
    expect(held.length).toBe(waiting + 1);
    const during = await post(`/api/v1/sites/${site.id}/media/import-url`, body, key);
    const duringBody = (await during.json()) as Json;
    expect([during.status, duringBody.error.code]).toEqual([409, "CONFLICT"]);
    expect(duringBody.error.message).toMatch(/still being processed/);
    expect(Number(during.headers.get("retry-after"))).toBeGreaterThan(0);
    held.pop()!();
    const done = await read(await first);
    expect(done.status).toBe(201);
    const before = arrivals;
    const after = await read(await post(`/api/v1/sites/${site.id}/media/import-url`, body, key));
    expect(after).toEqual({ ...done, replayed: "true" });
    expect(arrivals).toBe(before);
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toHaveLength(1);
  });

  test("a request whose key a retry took over (its lease lapsed) commits nothing: its work rolls back with its answer (decision 1411)", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const body = { url: `${origin}/held.png`, alt: "lapsed" };
    const waiting = held.length;
    const first = post(`/api/v1/sites/${site.id}/media/import-url`, body, key);
    const deadline = Date.now() + 10_000;
    while (held.length === waiting && Date.now() < deadline) await Bun.sleep(10);
    expect(held.length).toBe(waiting + 1);
    // Meanwhile its lease lapsed and a retry claimed the key (another token holds it now).
    await h.db.update(idempotencyKeys).set({ token: "the-retry" }).where(eq(idempotencyKeys.key, key));
    held.pop()!();
    const late = await first;
    const json = (await late.json()) as Json;
    expect([late.status, json.error.code]).toEqual([409, "CONFLICT"]);
    expect(json.error.message).toMatch(/lost its key/);
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toHaveLength(0);
    const [row] = await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect([row!.state, row!.token]).toEqual(["in_flight", "the-retry"]);
  });

  test("a 5xx answer is not kept: the retry with the same key runs again and can succeed", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const body = { url: `${origin}/a.png`, alt: "" };
    store.setFault("ENOSPC");
    try {
      const failed = await post(`/api/v1/sites/${site.id}/media/import-url`, body, key);
      expect(failed.status).toBe(503);
    } finally {
      store.setFault(null);
    }
    expect(await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key))).toEqual([]);
    const retry = await post(`/api/v1/sites/${site.id}/media/import-url`, body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toHaveLength(1);
  });

  test("a 4xx from the work is kept and replayed, even once the cause is gone; a new key runs again", async () => {
    const o = await h.seedOrg({ siteLimit: 1 });
    expect(
      (await h.call("POST", "/api/v1/sites", { key: o.key, body: { name: "One", slug: `o-${uniq()}` } }))
        .status,
    ).toBe(201);
    const key = `k-${uniq()}`;
    const body = { name: "Two", slug: `t-${uniq()}` };
    const refused = await read(await post("/api/v1/sites", body, key, { as: o.key }));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe("LIMIT_EXCEEDED");
    await h.db.update(organizations).set({ siteLimit: 5 }).where(eq(organizations.id, o.org.id));
    const replayed = await read(await post("/api/v1/sites", body, key, { as: o.key }));
    expect(replayed).toEqual({ ...refused, replayed: "true" });
    expect((await post("/api/v1/sites", body, `k-${uniq()}`, { as: o.key })).status).toBe(201);
  });

  test("a request refused before its work (validation, authorization) keeps nothing: the key stays free", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const bad = await post(`/api/v1/sites/${site.id}/pages`, { path: 5 }, key);
    expect(bad.status).toBe(400);
    const reader = await h.seedOrg({ scopes: ["content:read"] });
    expect(
      (
        await post(`/api/v1/sites/${site.id}/pages`, { path: "/x", title: "X", content: "" }, key, {
          as: reader.key,
        })
      ).status,
    ).toBe(403);
    const ok = await post(`/api/v1/sites/${site.id}/pages`, { path: "/x", title: "X", content: "" }, key);
    expect(ok.status).toBe(201);
  });

  test("after 24 hours the key is free again (the same request runs again), and the sweep deletes it", async () => {
    const site = await h.newSite(owner.key);
    const key = `k-${uniq()}`;
    const body = { path: "/old", title: "Old", content: "" };
    expect((await post(`/api/v1/sites/${site.id}/pages`, body, key)).status).toBe(201);
    const dayAgo = sql`now() - interval '24 hours 1 second'`;
    await h.db
      .update(idempotencyKeys)
      .set({ createdAt: dayAgo as never })
      .where(eq(idempotencyKeys.key, key));
    // Another body is no conflict with an expired key.
    const again = await post(`/api/v1/sites/${site.id}/pages`, { ...body, path: "/new" }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await pageCount(site.id)).toBe(2);
    await h.db
      .update(idempotencyKeys)
      .set({ createdAt: dayAgo as never })
      .where(eq(idempotencyKeys.key, key));
    expect(await sweepIdempotencyKeys(h.ctx)).toBeGreaterThanOrEqual(1);
    expect(await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key))).toEqual([]);
  });

  test("keys are the API key's own: other organizations, and other keys of the same one, use the same key independently", async () => {
    const a = await h.seedOrg();
    const b = await h.seedOrg();
    const key = "shared-key";
    const slugs = [`a-${uniq()}`, `b-${uniq()}`];
    const ra = await post("/api/v1/sites", { name: "A", slug: slugs[0] }, key, { as: a.key });
    const rb = await post("/api/v1/sites", { name: "A", slug: slugs[1] }, key, { as: b.key });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.headers.get("idempotent-replayed")).toBeNull();
    // A second key of organization A: its own keys too.
    const second = await createApiKey(h.ctx, { orgId: a.org.id, userId: a.user.id, scopes: ["sites:write"] });
    const rc = await post("/api/v1/sites", { name: "A", slug: slugs[0] }, key, { as: second.key });
    expect(rc.headers.get("idempotent-replayed")).toBeNull();
    expect(((await rc.json()) as Json).error.code).toBe("SLUG_TAKEN");
    // The very same request from another organization runs for it (never another's answer).
    const slug = `same-${uniq()}`;
    const first = await post("/api/v1/sites", { name: "S", slug }, "same-request", { as: a.key });
    expect(first.status).toBe(201);
    const fromB = await post("/api/v1/sites", { name: "S", slug }, "same-request", { as: b.key });
    expect(fromB.headers.get("idempotent-replayed")).toBeNull();
    expect(((await fromB.json()) as Json).error.code).toBe("SLUG_TAKEN");
    const rows = await h.db.select().from(sites).where(eq(sites.slug, slug));
    expect(rows).toHaveLength(1);
  });

  test("a key over 255 characters answers 400 VALIDATION_ERROR; 255 are accepted", async () => {
    const site = await h.newSite(owner.key);
    const long = await post(
      `/api/v1/sites/${site.id}/pages`,
      { path: "/l", title: "L", content: "" },
      "x".repeat(256),
    );
    const body = (await long.json()) as Json;
    expect([long.status, body.error.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(body.error.details[0].field).toBe("Idempotency-Key");
    expect(await pageCount(site.id)).toBe(0);
    const ok = await post(
      `/api/v1/sites/${site.id}/pages`,
      { path: "/l", title: "L", content: "" },
      "x".repeat(255),
    );
    expect(ok.status).toBe(201);
  });

  test("the tool protocol (POST /mcp) and public POSTs ignore the header: nothing is kept", async () => {
    const before = (await h.db.select().from(idempotencyKeys)).length;
    const rpc = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    for (let i = 0; i < 2; i++) {
      const res = await h.call("POST", "/mcp", {
        key: owner.key,
        body: rpc,
        headers: { "idempotency-key": "mcp-key", accept: "application/json, text/event-stream" },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
    }
    const pub = await h.call("POST", "/api/v1/public/sites/no-such-site/subscribe", {
      body: { email: "a@example.test" },
      headers: { "idempotency-key": "public-key" },
    });
    expect(pub.headers.get("idempotent-replayed")).toBeNull();
    expect((await h.db.select().from(idempotencyKeys)).length).toBe(before);
  });

  test("OpenAPI: every authenticated POST documents the Idempotency-Key header and a 409 CONFLICT", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as Json;
    let posts = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      const op = item.post;
      // API-key POSTs (bearerAuth); the operator's inbound route (operatorToken) has no API key to scope keys to.
      if (!op || !path.startsWith("/api/v1/") || !op.security?.some((r: Json) => r.bearerAuth)) continue;
      posts++;
      const header = (op.parameters ?? []).find(
        (p: Json) => p.in === "header" && p.name === "Idempotency-Key",
      );
      expect({ path, header: header?.schema }).toEqual({
        path,
        header: expect.objectContaining({ type: "string", maxLength: 255 }),
      });
      expect({ path, codes: op.responses["409"]?.["x-error-codes"] }).toEqual({
        path,
        codes: expect.arrayContaining(["CONFLICT"]),
      });
    }
    expect(posts).toBeGreaterThan(15);
    // A route's own 409 keeps its code beside CONFLICT.
    expect(doc.paths["/api/v1/sites"].post.responses["409"]["x-error-codes"]).toEqual(
      expect.arrayContaining(["SLUG_TAKEN", "CONFLICT"]),
    );
    expect(doc.paths["/mcp"].post.parameters ?? []).not.toContainEqual(
      expect.objectContaining({ name: "Idempotency-Key" }),
    );
  });
});
