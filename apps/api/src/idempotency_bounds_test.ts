import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { idempotencyKeys, pages, screenshotRenders } from "@site/db";
import { createMemoryQueue, type JobQueue } from "@site/queue";
import { and, eq, sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// Bounded replays (CONTRACT "Bounded: retries, replays, images"; decisions 1410–1413): capped answers,
// side-effect-free operations not kept, every kept answer sealed, a 5xx after the work began kept.
type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 10);

// A render queue that is down for everything (the enqueue after the charge fails): 502, refunded.
function brokenQueue(): JobQueue {
  const inner = createMemoryQueue({ log: createLogger("silent" as never) });
  return {
    ...inner,
    driver: "memory",
    enqueue: async () => {
      throw new Error("the queue refuses every job");
    },
  };
}

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp({
    queue: brokenQueue(),
    env: {
      IDEMPOTENCY_MAX_ANSWER_BYTES: "1200",
      IDEMPOTENCY_ORG_BYTES: "2500",
      CHROMIUM_PATH: "/bin/true",
      FFMPEG_PATH: "/bin/true",
    },
  });
});
afterAll(() => h.close());

const post = (key: string, path: string, body: unknown, idem: string) =>
  h.call("POST", path, { key, body, headers: { "idempotency-key": idem } });
const rowsOf = (orgId: string) => h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.orgId, orgId));
const pageCount = async (siteId: string) =>
  (await h.db.select({ path: pages.path }).from(pages).where(eq(pages.siteId, siteId))).filter(
    (p) => p.path !== "/",
  ).length;

describe("Idempotency-Key: bounded replays", () => {
  test("an answer over IDEMPOTENCY_MAX_ANSWER_BYTES is not kept, yet the key runs nothing twice: its replay answers 409 CONFLICT saying so", async () => {
    const o = await h.seedOrg();
    const site = await h.newSite(o.key);
    const key = `k-${uniq()}`;
    const body = { path: "/big", title: "Big", content: `# Big\n\n${"words ".repeat(400)}` };
    const first = await post(o.key, `/api/v1/sites/${site.id}/pages`, body, key);
    expect(first.status).toBe(201);
    expect((await first.text()).length).toBeGreaterThan(1200);
    const [row] = await rowsOf(o.org.id);
    expect(row!.responseBody).toBeNull();
    const again = await post(o.key, `/api/v1/sites/${site.id}/pages`, body, key);
    const json = (await again.json()) as Json;
    expect([again.status, json.error.code]).toEqual([409, "CONFLICT"]);
    expect(json.error.message).toMatch(/already done.*not kept.*IDEMPOTENCY_MAX_ANSWER_BYTES/);
    expect(json.error.details).toEqual([
      { field: "Idempotency-Key", message: "done; its answer was not kept" },
    ]);
    expect(await pageCount(site.id)).toBe(1);
  });

  test("an organization's kept answers stop at IDEMPOTENCY_ORG_BYTES a rolling day; past it keys still hold (409), another organization is not touched", async () => {
    const o = await h.seedOrg();
    const other = await h.seedOrg();
    const site = await h.newSite(o.key);
    const keys = Array.from(
      { length: 20 },
      (_, i) => [`k-${i}-${uniq()}`, { path: `/p${i}`, title: `P${i}`, content: "" }] as const,
    );
    for (const [key, body] of keys)
      expect((await post(o.key, `/api/v1/sites/${site.id}/pages`, body, key)).status).toBe(201);
    const rows = await rowsOf(o.org.id);
    const kept = rows.filter((r) => r.responseBody !== null);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(20);
    // What the database holds for the organization stays near the budget (sealed text is ~4/3 of it).
    const [stored] = await h.db
      .select({ n: sql<number>`coalesce(sum(octet_length(${idempotencyKeys.responseBody})), 0)::int` })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.orgId, o.org.id));
    expect(stored!.n).toBeLessThanOrEqual(2500 * 1.5);
    // Every key still holds: a kept one replays, the others answer 409; nothing runs twice.
    const answers = await Promise.all(
      keys.map(([key, body]) => post(o.key, `/api/v1/sites/${site.id}/pages`, body, key)),
    );
    expect(answers.filter((a) => a.status === 201).length).toBe(kept.length);
    expect(answers.filter((a) => a.status === 409).length).toBe(20 - kept.length);
    expect(answers.every((a) => a.status === 409 || a.headers.get("idempotent-replayed") === "true")).toBe(
      true,
    );
    const refused = (await answers.find((a) => a.status === 409)!.json()) as Json;
    expect(refused.error.message).toMatch(/IDEMPOTENCY_ORG_BYTES/);
    expect(await pageCount(site.id)).toBe(20);
    // Another organization's budget is its own.
    const theirs = await h.newSite(other.key);
    const k = `k-${uniq()}`;
    expect(
      (await post(other.key, `/api/v1/sites/${theirs.id}/pages`, { path: "/x", title: "X", content: "" }, k))
        .status,
    ).toBe(201);
    expect(
      (
        await post(other.key, `/api/v1/sites/${theirs.id}/pages`, { path: "/x", title: "X", content: "" }, k)
      ).headers.get("idempotent-replayed"),
    ).toBe("true");
    // A day later the budget is back.
    await h.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '24 hours 1 second'` as never })
      .where(eq(idempotencyKeys.orgId, o.org.id));
    const later = `k-${uniq()}`;
    const body = { path: "/later", title: "Later", content: "" };
    expect((await post(o.key, `/api/v1/sites/${site.id}/pages`, body, later)).status).toBe(201);
    expect(
      (await post(o.key, `/api/v1/sites/${site.id}/pages`, body, later)).headers.get("idempotent-replayed"),
    ).toBe("true");
  });

  test("operations without side effects (link translation, estimates) keep nothing: no row, the same key runs again", async () => {
    const o = await h.seedOrg();
    const site = await h.newSite(o.key);
    const calls: [string, unknown][] = [
      [`/api/v1/sites/${site.id}/links/translate`, { hrefs: ["/", "https://example.com/"] }],
      [`/api/v1/sites/${site.id}/media/screenshot`, { url: "https://example.com/", estimateOnly: true }],
      ["/api/v1/social/media/clips", { url: "https://example.com/", motion: "scroll", estimateOnly: true }],
    ];
    for (const [path, body] of calls) {
      const key = `k-${uniq()}`;
      for (let i = 0; i < 2; i++) {
        const res = await post(o.key, path, body, key);
        expect({ path, status: res.status, text: res.status === 200 ? "" : await res.text() }).toEqual({
          path,
          status: 200,
          text: "",
        });
        expect(res.headers.get("idempotent-replayed")).toBeNull();
      }
    }
    expect(await rowsOf(o.org.id)).toEqual([]);
  });

  test("a webhook's secret shown once is kept sealed with SECRET_KEY: the replay gives it, the row holds it in no readable form", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write"] });
    const key = `k-${uniq()}`;
    const body = { url: "https://hooks.example.com/in", events: ["site.published"] };
    const first = await post(o.key, "/api/v1/webhooks", body, key);
    expect(first.status).toBe(201);
    const created = (await first.json()) as Json;
    expect(typeof created.secret).toBe("string");
    const rotateKey = `k-${uniq()}`;
    const rotated = await post(o.key, `/api/v1/webhooks/${created.webhook.id}/rotate-secret`, {}, rotateKey);
    expect(rotated.status).toBe(200);
    const rotatedSecret = ((await rotated.json()) as Json).secret as string;
    for (const row of await rowsOf(o.org.id)) {
      const stored = row.responseBody ?? "";
      for (const secret of [created.secret as string, rotatedSecret]) {
        const bare = secret.replace(/^whsec_/, "");
        expect(stored.includes(bare)).toBe(false);
        expect(Buffer.from(stored, "base64").toString("latin1").includes(bare)).toBe(false);
        expect(Buffer.from(stored, "base64url").toString("latin1").includes(bare)).toBe(false);
      }
    }
    const replay = await post(o.key, "/api/v1/webhooks", body, key);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(((await replay.json()) as Json).secret).toBe(created.secret);
    const replayRotate = await post(
      o.key,
      `/api/v1/webhooks/${created.webhook.id}/rotate-secret`,
      {},
      rotateKey,
    );
    expect(((await replayRotate.json()) as Json).secret).toBe(rotatedSecret);
  });

  test("a 5xx answered after the work began is kept (Stripe's rule): the retry replays it and nothing is charged or queued again", async () => {
    const o = await h.seedOrg({ credits: 100 });
    const site = await h.newSite(o.key);
    const key = `k-${uniq()}`;
    const body = { url: "https://example.com/" };
    const path = `/api/v1/sites/${site.id}/media/screenshot`;
    const first = await post(o.key, path, body, key);
    expect(first.status).toBe(502);
    const firstBody = await first.text();
    const again = await post(o.key, path, body, key);
    expect(again.status).toBe(502);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstBody);
    const renders = await h.db
      .select({ id: screenshotRenders.id })
      .from(screenshotRenders)
      .where(and(eq(screenshotRenders.orgId, o.org.id)));
    expect(renders).toHaveLength(1);
  });

  test("a key held by a request whose process died says when its lease ends in Retry-After, not 1", async () => {
    const o = await h.seedOrg();
    const site = await h.newSite(o.key);
    const key = `k-${uniq()}`;
    const body = { path: "/held", title: "Held", content: "" };
    const path = `/api/v1/sites/${site.id}/pages`;
    // The claim of a request that was cut off mid-work: its lease runs 40 s more.
    expect((await post(o.key, path, body, key)).status).toBe(201);
    await h.db
      .update(idempotencyKeys)
      .set({
        state: "in_flight",
        token: "dead-process",
        lockedUntil: sql`now() + interval '40 seconds'` as never,
        responseBody: null,
        responseStatus: null,
      })
      .where(eq(idempotencyKeys.key, key));
    const held = await post(o.key, path, body, key);
    expect(held.status).toBe(409);
    expect(((await held.json()) as Json).error.message).toMatch(/still being processed/);
    const retryAfter = Number(held.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(38);
    expect(retryAfter).toBeLessThanOrEqual(41);
  });
});
