import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { upsertTemplate } from "@site/domain/sites";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

describe("GET /api/v1/templates", () => {
  test("keeps the auth rules", async () => {
    await expectAuthRules(h, { method: "GET", path: "/api/v1/templates", scope: "sites:write" });
  });

  test("lists approved templates only", async () => {
    const org = await h.seedOrg();
    const site = (await (
      await h.call("POST", "/api/v1/sites", { key: org.key, body: { name: "Host", slug: "tpl-host-list" } })
    ).json()) as any;
    await upsertTemplate(h.ctx, {
      slug: "bakery",
      siteId: site.site.id,
      name: "Bakery",
      description: "A bakery with a menu page",
    });
    await upsertTemplate(h.ctx, {
      slug: "old-bakery",
      siteId: site.site.id,
      name: "Old",
      status: "withdrawn",
    });
    const res = await h.call("GET", "/api/v1/templates", { key: org.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.templates.map((t: any) => t.slug)).toEqual(["bakery"]);
    expect(body.templates[0]).toEqual({
      slug: "bakery",
      name: "Bakery",
      description: "A bakery with a menu page",
    });
  });
});
