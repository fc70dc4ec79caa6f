import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
let org: Awaited<ReturnType<TestApp["seedOrg"]>>;
let siteId: string;

beforeAll(async () => {
  h = await buildTestApp();
  org = await h.seedOrg();
  const res = await h.call("POST", "/api/v1/sites", {
    key: org.key,
    body: { name: "Pages", slug: `pg-${Date.now().toString(36)}` },
  });
  siteId = ((await res.json()) as any).site.id;
});
afterAll(() => h.close());

const json = async (res: Response) => (await res.json()) as any;

describe("pages of a site", () => {
  test("keep the auth rules", async () => {
    await expectAuthRules(h, { method: "GET", path: `/api/v1/sites/${siteId}/pages`, scope: "content:read" });
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${siteId}/pages`,
      scope: "content:write",
      body: { path: "/x", title: "X", content: "" },
    });
  });

  test("create, read, update, list and delete a page", async () => {
    const created = await h.call("POST", `/api/v1/sites/${siteId}/pages`, {
      key: org.key,
      body: { path: "/about", title: "About", content: "# About us", position: 2 },
    });
    expect(created.status).toBe(201);
    const { page } = await json(created);
    expect(page).toMatchObject({ path: "/about", title: "About", content: "# About us", position: 2 });
    const got = await json(await h.call("GET", `/api/v1/sites/${siteId}/pages/${page.id}`, { key: org.key }));
    expect(got.page.id).toBe(page.id);
    const patched = await h.call("PATCH", `/api/v1/sites/${siteId}/pages/${page.id}`, {
      key: org.key,
      body: { title: "About Acme" },
    });
    expect(patched.status).toBe(200);
    expect((await json(patched)).page).toMatchObject({ title: "About Acme", content: "# About us" });
    const list = await json(await h.call("GET", `/api/v1/sites/${siteId}/pages`, { key: org.key }));
    expect(list.pages.map((p: any) => p.path)).toEqual(["/", "/about"]);
    const del = await h.call("DELETE", `/api/v1/sites/${siteId}/pages/${page.id}`, { key: org.key });
    expect(del.status).toBe(204);
    const gone = await h.call("GET", `/api/v1/sites/${siteId}/pages/${page.id}`, { key: org.key });
    expect(gone.status).toBe(404);
  });

  test("bad paths, empty titles and duplicate paths are 400 VALIDATION_ERROR naming the field", async () => {
    for (const [body, field] of [
      [{ path: "about", title: "A", content: "" }, "path"],
      [{ path: "/About Us", title: "A", content: "" }, "path"],
      [{ path: "/ok", title: " ", content: "" }, "title"],
      [{ path: "/ok", title: "A" }, "content"],
      [{ path: "/", title: "Dup", content: "" }, "path"],
    ] as const) {
      const res = await h.call("POST", `/api/v1/sites/${siteId}/pages`, { key: org.key, body });
      expect(res.status).toBe(400);
      const err = (await json(res)).error;
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(err.details[0].field).toBe(field);
    }
  });

  test("another organization's site and pages are 404", async () => {
    const stranger = await h.seedOrg();
    const res = await h.call("GET", `/api/v1/sites/${siteId}/pages`, { key: stranger.key });
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe("NOT_FOUND");
    const page = await h.call("GET", `/api/v1/sites/${siteId}/pages/00000000-0000-0000-0000-000000000000`, {
      key: org.key,
    });
    expect(page.status).toBe(404);
  });
});
