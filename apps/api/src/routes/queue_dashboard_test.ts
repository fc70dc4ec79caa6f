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
      const body = (await api.json()) as {
        queues: {
          name: string;
          counts: Record<string, number>;
          readOnlyMode: boolean;
          allowRetries: boolean;
        }[];
      };
      const renders = body.queues.find((q) => q.name === "renders");
      expect(renders?.counts.waiting).toBe(1);

      // Served without outside requests: no Google Fonts, and a CSP that allows this origin only.
      expect(html).not.toContain("fonts.googleapis.com");
      expect(html).not.toMatch(/(href|src)="https?:\/\//);
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("font-src 'self'");
      expect(csp).not.toMatch(/https?:/);

      // Read-only for a token holder: the UI offers no clean, retry or delete, and the API refuses them.
      expect(renders).toMatchObject({ readOnlyMode: true, allowRetries: false });
      for (const [method, path] of [
        ["PUT", "/admin/queues/api/queues/renders/clean/waiting"],
        ["PUT", "/admin/queues/api/queues/renders/clean/completed"],
        ["PUT", "/admin/queues/api/queues/renders/retry/failed"],
        ["PUT", "/admin/queues/api/queues/renders/empty"],
        ["PUT", `/admin/queues/api/queues/renders/${id}/clean`],
      ] as const) {
        const res = await h.call(method, path, { key: TOKEN });
        expect([method, path, res.status]).toEqual([method, path, 405]);
      }
      const after = (await (
        await h.call("GET", "/admin/queues/api/queues", { key: TOKEN })
      ).json()) as typeof body;
      expect(after.queues.find((q) => q.name === "renders")?.counts.waiting).toBe(1);
    },
    30_000,
  );
});
