import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount } from "../../testing/social.ts";

// X's and Threads' text limits, checked before anything is published (decision 1301), through the app
// against the strict fakes (which refuse the same texts).
let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env });
});
afterAll(async () => {
  fake.close();
  await h.close();
});

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;

const connect = async (key: string, platform: string) =>
  (await connectSocialAccount(h, key, platform, platform === "x" ? { tier: "basic" } : {})).id;

async function post(key: string, b: Json) {
  const res = await h.call("POST", "/api/v1/social/posts", { key, body: b });
  return { status: res.status, json: await body(res) };
}

describe("X: 280 weighted characters, a URL counting 23", () => {
  test("280 characters, or a longer text whose URL counts 23, are published as written", async () => {
    const { key } = await h.seedOrg();
    const x = await connect(key, "x");
    const full = await post(key, { content: "a".repeat(280), accounts: [x] });
    expect(full.status).toBe(201);
    expect(full.json.post.targets[0]).toMatchObject({ platform: "x", status: "published", error: null });
    const url = `https://example.com/${"path/".repeat(50)}`;
    const linked = `${"b".repeat(250)} ${url}`; // 250 + 1 + 23 = 274 as X counts it, 521 as written
    const withUrl = await post(key, { content: linked, accounts: [x] });
    expect(withUrl.status).toBe(201);
    expect(withUrl.json.post.targets[0].status).toBe("published");
    const [row] = await h.sql`select platform_post_id from social_targets where account_id = ${x}
      order by created_at desc limit 1`;
    expect(fake.publishedText(row!.platform_post_id)).toBe(linked);
  });

  test("281 characters, or 141 emoji, answer 400 VALIDATION_ERROR naming content and the limit; nothing is published anywhere", async () => {
    const { key } = await h.seedOrg();
    const x = await connect(key, "x");
    const reddit = await connect(key, "reddit");
    for (const content of ["a".repeat(281), "👾".repeat(141)]) {
      const res = await post(key, { content, accounts: [reddit, x] });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
      expect(res.json.error.message).toContain("at most 280");
      expect(res.json.error.details).toEqual([
        { field: "content", message: expect.stringContaining("for x") },
      ]);
    }
    expect((await body(await h.call("GET", "/api/v1/social/posts", { key }))).posts).toEqual([]);
    expect(await h.sql`select 1 from social_targets where account_id in (${x}, ${reddit})`).toHaveLength(0);
  });

  test("an override is X's text: a long content with a short override is published; a long override is named", async () => {
    const { key } = await h.seedOrg();
    const x = await connect(key, "x");
    const ok = await post(key, {
      content: "c".repeat(400),
      platformOverrides: { x: "short for X" },
      accounts: [x],
    });
    expect(ok.status).toBe(201);
    expect(ok.json.post.targets[0].status).toBe("published");
    const bad = await post(key, {
      content: "fine",
      platformOverrides: { x: "o".repeat(300) },
      accounts: [x],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details).toEqual([
      {
        field: "platformOverrides.x",
        message: "300 characters for x, at most 280 (URLs count 23, emoji and CJK 2)",
      },
    ]);
  });
});

describe("Threads: 500 characters, an emoji counting its UTF-8 bytes", () => {
  test("500 characters and 125 emoji are published; 501 characters and 126 emoji answer 400 naming content", async () => {
    const { key } = await h.seedOrg();
    const threads = await connect(key, "threads");
    for (const content of ["t".repeat(500), "👾".repeat(125)]) {
      const res = await post(key, { content, accounts: [threads] });
      expect(res.status).toBe(201);
      expect(res.json.post.targets[0]).toMatchObject({ platform: "threads", status: "published" });
    }
    for (const [content, counted] of [
      ["t".repeat(501), 501],
      ["👾".repeat(126), 504],
    ] as const) {
      const res = await post(key, { content, accounts: [threads] });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
      expect(res.json.error.details).toEqual([
        {
          field: "content",
          message: `${counted} characters for threads, at most 500 (an emoji counts its UTF-8 bytes)`,
        },
      ]);
    }
  });

  test("each platform is checked against its own text: X and Threads named together, a platform without a limit never", async () => {
    const { key } = await h.seedOrg();
    const x = await connect(key, "x");
    const threads = await connect(key, "threads");
    const linkedin = await connect(key, "linkedin");
    const res = await post(key, { content: "w".repeat(600), accounts: [x, threads, linkedin] });
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: Json) => d.message.split(",")[0]).sort()).toEqual([
      "600 characters for threads",
      "600 characters for x",
    ]);
    const long = await post(key, { content: "w".repeat(600), accounts: [linkedin] });
    expect(long.status).toBe(201);
  });
});
