import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { creditLedger, mediaFiles, organizations, screenshotProjects } from "@site/db";
import { finishLogin, type ProjectVariants } from "@site/domain";
import { buildTestApp, type TestApp } from "../../api/src/testing.ts";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";
import { html, LANDING, runtimeOf, servePages, until } from "./render_fixture.ts";

// One daemon (real Chromium, in-process queue) serves every test of this file.
const pages = servePages({
  "/": () => html(LANDING),
  "/app": () => new Response(null, { status: 302, headers: { location: "/login?next=/app" } }),
  "/members": (req) =>
    (req.headers.get("cookie") ?? "").includes("sid=owner")
      ? html(LANDING)
      : new Response(null, { status: 302, headers: { location: "/login" } }),
  "/login": () =>
    html(
      `<!doctype html><body><h1>Sign in</h1><form><input name="email"><input type="password" name="pw"></form></body>`,
    ),
});
let h: TestApp;
let daemon: RenderDaemon;
let org: Awaited<ReturnType<TestApp["seedOrg"]>>;
let siteId: string;

beforeAll(async () => {
  h = await buildTestApp({
    env: { FETCH_ALLOW_HOSTS: pages.host, RENDER_METRICS_PORT: "0", RENDER_CONCURRENCY: "2" },
  });
  daemon = await startRenderDaemon(runtimeOf(h));
  org = await h.seedOrg({ credits: 100 });
  const res = await h.call("POST", "/api/v1/sites", {
    key: org.key,
    body: { name: "Lumen", slug: `lumen-${Date.now()}` },
  });
  siteId = ((await res.json()) as { site: { id: string } }).site.id;
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
  pages.stop();
});

type Render = {
  status: string;
  imageUrl: string | null;
  width?: number;
  height?: number;
  warnings?: string[];
  error: string | null;
};

async function renderOf(body: Record<string, unknown>): Promise<Render> {
  const res = await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot`, { key: org.key, body });
  expect(res.status).toBe(202);
  const { renderId } = (await res.json()) as { renderId: string };
  return until(async () => {
    const poll = await h.call("GET", `/api/v1/sites/${siteId}/media/screenshot/${renderId}`, {
      key: org.key,
    });
    const r = (await poll.json()) as Render;
    return r.status === "pending" ? null : r;
  }, 90_000);
}

const credits = async () =>
  (
    await h.db
      .select({ c: organizations.credits })
      .from(organizations)
      .where(eq(organizations.id, org.org.id))
  )[0].c;

describe("render daemon end to end (API → in-process queue → Chromium → library)", () => {
  test("a render films the page, frames it and lands in the library as done", async () => {
    const r = await renderOf({ url: pages.url("/"), theme: "dark", chrome: "light" });
    expect(r).toMatchObject({ status: "done", error: null, warnings: [] });
    expect(r.imageUrl).toStartWith(`/api/media/site-media/${siteId}/`);
    expect(r.width).toBeGreaterThan(0);
    expect(r.height).toBeGreaterThan(0);
    const key = decodeURIComponent((r.imageUrl as string).replace("/api/media/", ""));
    const [file] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.key, key));
    expect(file).toMatchObject({ siteId, source: "screenshot", width: r.width, height: r.height });
    expect(await h.ctx.store.head(key)).not.toBeNull();
    expect(await credits()).toBe(90);
    // Naming a theme filmed both variants.
    const [project] = await h.db
      .select()
      .from(screenshotProjects)
      .where(eq(screenshotProjects.siteId, siteId));
    const v = project.variants as ProjectVariants;
    expect(Object.keys(v).sort()).toEqual(["dark", "first", "light"]);
  }, 120_000);

  test("a new look re-composes the stored capture without filming; recapture films again", async () => {
    const project = async () =>
      (await h.db.select().from(screenshotProjects).where(eq(screenshotProjects.siteId, siteId)))[0];
    const before = (await project()).variants as ProjectVariants;
    const hitsBefore = pages.hits.get("/") ?? 0;
    const r = await renderOf({ url: pages.url("/"), theme: "light", chrome: "none", framing: 0.8 });
    expect(r.status).toBe("done");
    expect(pages.hits.get("/") ?? 0).toBe(hitsBefore);
    expect(((await project()).variants as ProjectVariants).light?.filmedAt).toBe(before.light?.filmedAt);
    const again = await renderOf({ url: pages.url("/"), recapture: true });
    expect(again.status).toBe("done");
    expect(pages.hits.get("/") ?? 0).toBeGreaterThan(hitsBefore);
    // Omitting the theme frames the first captured variant (dark was named first).
    expect(((await project()).variants as ProjectVariants).first).toBe("dark");
  }, 120_000);

  test("a page that redirects to a sign-in form gives a done render with a login warning", async () => {
    const r = await renderOf({ url: pages.url("/app") });
    expect(r.status).toBe("done");
    expect(r.warnings?.join(" ")).toMatch(/login/i);
  }, 120_000);

  test("after sign-in, later screenshots of the site start with the stored session", async () => {
    const res = await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot-login`, {
      key: org.key,
      body: { url: pages.url("/members") },
    });
    const token = new URL(((await res.json()) as { loginUrl: string }).loginUrl).pathname
      .split("/")
      .pop() as string;
    const before = await renderOf({ url: pages.url("/members") });
    expect(before.warnings?.join(" ")).toMatch(/login/i);
    await finishLogin(h.ctx, token, {
      cookies: [{ name: "sid", value: "owner", domain: "127.0.0.1", path: "/" }],
      localStorage: {},
    });
    const after = await renderOf({ url: pages.url("/members"), recapture: true });
    expect(after).toMatchObject({ status: "done", warnings: [] });
  }, 120_000);

  test("a render that fails for good ends failed with its error, refunded exactly once", async () => {
    const start = await credits();
    const r = await renderOf({ url: "https://no-such-host.invalid/" });
    expect(r.status).toBe("failed");
    expect(r.error).toBeTruthy();
    expect(r.imageUrl).toBeNull();
    expect(await credits()).toBe(start);
    const refunds = await h.db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.orgId, org.org.id), eq(creditLedger.reason, "screenshot_refund")));
    expect(refunds).toHaveLength(1);
  }, 120_000);

  test("GET /metrics reports queue depth, renders by outcome and time per stage", async () => {
    const res = await fetch(daemon.metricsUrl?.replace("0.0.0.0", "127.0.0.1") ?? "");
    const text = await res.text();
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(text).toMatch(/^render_queue_depth 0$/m);
    expect(text).toMatch(/^renders_total\{outcome="done"\} [1-9]/m);
    expect(text).toMatch(/^renders_total\{outcome="failed"\} 1$/m);
    for (const stage of ["film", "compose", "store"])
      expect(text).toMatch(new RegExp(`^render_stage_seconds_count\\{stage="${stage}"\\} [1-9]`, "m"));
  });
});
