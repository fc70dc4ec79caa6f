import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { failGeneration, generateImages } from "@site/domain/social";
import { startFakeImageApi } from "@site/social/testing";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

// AI image generation against a local server speaking OpenAI's images API: credits debited in the
// transaction that records the request, refunded exactly once when generation fails.

let h: TestApp;
let images: ReturnType<typeof startFakeImageApi>;
beforeAll(async () => {
  images = startFakeImageApi({ delayMs: 20 });
  h = await buildTestApp({ env: images.env });
});
afterAll(async () => {
  images.close();
  await h.close();
});

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;
const generate = (key: string, b: Json) => h.call("POST", "/api/v1/social/media/generate", { key, body: b });
const credits = async (orgId: string) =>
  (await h.sql`select credits from organizations where id = ${orgId}`)[0]!.credits as number;
const ledger = async (orgId: string): Promise<{ reason: string; delta: number }[]> => [
  ...(await h.sql<{ reason: string; delta: number }[]>`
    select reason, delta from credit_ledger where org_id = ${orgId} and reason like 'image%' order by id`),
];

describe("auth rules", () => {
  test("POST /api/v1/social/media/generate: 401 without or with a bad key, 403 without social:write", async () => {
    await expectAuthRules(h, {
      method: "POST",
      path: "/api/v1/social/media/generate",
      body: { prompt: "a cat" },
      scope: "social:write",
    });
  });
});

describe("generating images", () => {
  test("success: the images land in the social library, charged once (10 credits an image)", async () => {
    const { key, org } = await h.seedOrg({ credits: 100 });
    const res = await generate(key, { prompt: "a lighthouse at dusk", n: 2, size: "1536x1024" });
    expect(res.status).toBe(201);
    const out = await body(res);
    expect(out.creditsCharged).toBe(20);
    expect(out.media).toHaveLength(2);
    expect(out.media[0]).toMatchObject({ kind: "image", contentType: "image/png", width: 64, height: 64 });
    const listed = await body(await h.call("GET", "/api/v1/social/media", { key }));
    expect(listed.media.map((m: Json) => m.id).sort()).toEqual(out.media.map((m: Json) => m.id).sort());
    expect(await credits(org.id)).toBe(80);
    expect(await ledger(org.id)).toEqual([{ reason: "image_debit", delta: -20 }]);
    expect(images.requests.at(-1)).toEqual({
      model: "gpt-image-1",
      prompt: "a lighthouse at dusk",
      n: 2,
      size: "1536x1024",
    });
  });

  test("a provider failure: 502 RENDERER_ERROR, credits refunded exactly once, nothing in the library", async () => {
    const { key, org } = await h.seedOrg({ credits: 30 });
    images.fail(1);
    const res = await generate(key, { prompt: "a storm" });
    expect(res.status).toBe(502);
    const err = (await body(res)).error;
    expect(err.code).toBe("RENDERER_ERROR");
    expect(err.message).toContain("refunded");
    expect(await credits(org.id)).toBe(30);
    expect(await ledger(org.id)).toEqual([
      { reason: "image_debit", delta: -10 },
      { reason: "image_refund", delta: 10 },
    ]);
    // A second refund of the same request refunds nothing.
    const [gen] = await h.sql`select id from image_generations where org_id = ${org.id}`;
    expect(await failGeneration(h.ctx, gen!.id, "again")).toBe(false);
    expect(await credits(org.id)).toBe(30);
    expect((await body(await h.call("GET", "/api/v1/social/media", { key }))).media).toEqual([]);
  });

  test("bytes that are not an image: refused like an upload, refunded", async () => {
    const { key, org } = await h.seedOrg({ credits: 10 });
    images.garbage(1);
    expect((await generate(key, { prompt: "x" })).status).toBe(502);
    expect(await credits(org.id)).toBe(10);
    expect((await body(await h.call("GET", "/api/v1/social/media", { key }))).media).toEqual([]);
  });

  test("30 concurrent requests on 50 credits: exactly 5 charged, the balance never below 0", async () => {
    const { key, org } = await h.seedOrg({ credits: 50 });
    const served = images.served();
    const answers = await Promise.all(Array.from({ length: 30 }, () => generate(key, { prompt: "a fox" })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(25);
    expect(await credits(org.id)).toBe(0);
    expect((await ledger(org.id)).filter((l) => l.reason === "image_debit")).toHaveLength(5);
    expect(images.served() - served).toBe(5);
  });

  test("without credits: 402 QUOTA_EXCEEDED and nothing recorded; bad input: 400", async () => {
    const { key, org } = await h.seedOrg({ credits: 9 });
    const res = await generate(key, { prompt: "a cat" });
    expect([res.status, (await body(res)).error.code]).toEqual([402, "QUOTA_EXCEEDED"]);
    expect(await h.sql`select id from image_generations where org_id = ${org.id}`).toHaveLength(0);
    for (const b of [
      { prompt: "" },
      { prompt: "x", n: 5 },
      { prompt: "x", n: 0 },
      { prompt: "x", size: "999x999" },
      {},
    ])
      expect((await generate(key, b)).status).toBe(400);
    expect(await credits(org.id)).toBe(9);
  });

  test("without IMAGE_API_BASE: 501 NOT_CONFIGURED before any charge", async () => {
    const { org } = await h.seedOrg({ credits: 100 });
    const ctx = { ...h.ctx, config: { ...h.ctx.config, image: { ...h.ctx.config.image, apiBase: null } } };
    const principal = {
      keyId: "k",
      orgId: org.id,
      userId: "u",
      scopes: ["social:write" as const],
      role: "owner" as const,
    };
    const err = await generateImages(ctx, principal, { prompt: "a cat" }).catch((e) => e);
    expect(err.code).toBe("NOT_CONFIGURED");
    expect(await credits(org.id)).toBe(100);
    expect(await ledger(org.id)).toEqual([]);
  });
});

describe("a generated image over MEDIA_MAX_PIXELS (issue 38)", () => {
  test("the provider's 64×64 PNGs under MEDIA_MAX_PIXELS=4000: 502 RENDERER_ERROR naming it, refunded, nothing listed", async () => {
    const small = await buildTestApp({ env: { ...images.env, MEDIA_MAX_PIXELS: "4000" } });
    try {
      const { key, org } = await small.seedOrg({ credits: 30 });
      const res = await small.call("POST", "/api/v1/social/media/generate", {
        key,
        body: { prompt: "x", n: 2 },
      });
      expect(res.status).toBe(502);
      const err = (await body(res)).error;
      expect(err.code).toBe("RENDERER_ERROR");
      expect(err.message).toContain("MEDIA_MAX_PIXELS");
      const left = await small.sql`select credits from organizations where id = ${org.id}`;
      expect(left[0]!.credits).toBe(30);
      expect((await body(await small.call("GET", "/api/v1/social/media", { key }))).media).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
