import { afterAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createLogger } from "@site/config";
import { createBullQueue } from "@site/queue";
import { buildTestApp } from "../../testing/mod.ts";

const redisUrl = process.env.TEST_REDIS_URL;
const TOKEN = "operator-token-for-the-test-0123456789";
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("the queue dashboard (bull-board)", () => {
  test("is not mounted without Redis or an operator token", async () => {
    const h = await buildTestApp({ env: { OPERATOR_TOKEN: TOKEN } });
    closers.push(() => h.close());
    await h.app.modules;
    expect((await h.call("GET", "/admin/queues")).status).toBe(404);
  });

  test.skipIf(!redisUrl)(
    "sits behind OPERATOR_TOKEN (bearer, or the cookie its entry link sets) and shows the render queue",
    async () => {
      const prefix = `dash-${Date.now()}`;
      const h = await buildTestApp({
        env: { REDIS_URL: redisUrl!, OPERATOR_TOKEN: TOKEN, QUEUE_PREFIX: prefix },
      });
      const producer = createBullQueue({ redisUrl: redisUrl!, log: createLogger("error"), prefix });
      closers.push(
        () => h.close(),
        () => producer.close(),
        async () => {
          await h.app.stop();
        },
      );
      await h.app.modules;
      const id = randomUUID();
      await producer.enqueue("render-screenshot", { renderId: id }, { jobId: id });

      const none = await h.call("GET", "/admin/queues");
      expect(none.status).toBe(401);
      expect(none.headers.get("www-authenticate")).toStartWith("Bearer");
      expect((await h.call("GET", "/admin/queues/api/queues", { key: "not-the-token" })).status).toBe(401);
      expect((await h.call("GET", "/admin/queues?token=wrong")).status).toBe(401);

      const entry = await h.call("GET", `/admin/queues?token=${TOKEN}`);
      expect(entry.status).toBe(303);
      expect(entry.headers.get("location")).toBe("/admin/queues");
      const cookie = entry.headers.get("set-cookie")!.split(";")[0]!;
      expect(cookie).not.toContain(TOKEN);
      const page = await h.call("GET", "/admin/queues", { headers: { cookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("<html");
      const script = /src="([^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = new URL(script!, "http://localhost/admin/queues/").pathname;
      expect((await h.call("GET", asset, { headers: { cookie } })).status).toBe(200);

      const api = await h.call("GET", "/admin/queues/api/queues", { key: TOKEN });
      expect(api.status).toBe(200);
      const body = (await api.json()) as { queues: { name: string; counts: Record<string, number> }[] };
      const renders = body.queues.find((q) => q.name === "renders");
      expect(renders?.counts.waiting).toBe(1);
    },
    30_000,
  );
});
