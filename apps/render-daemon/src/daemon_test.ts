import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadImage } from "@napi-rs/canvas";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { creditLedger, mediaFiles, organizations, screenshotProjects } from "@site/db";
import { finishLogin, type ProjectVariants } from "@site/domain/screenshots";
import { and, eq } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

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

beforeAll(async () => {
  h = await buildTestApp({
    env: { FETCH_ALLOW_HOSTS: pages.host, RENDER_METRICS_PORT: "0", RENDER_CONCURRENCY: "2" },
  });
  daemon = await startRenderDaemon(runtimeOf(h));
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

type Site = { org: Awaited<ReturnType<TestApp["seedOrg"]>>; siteId: string };

/** An organization with 100 credits and a site of its own: each test starts from nothing. */
async function freshSite(): Promise<Site> {
  const org = await h.seedOrg({ credits: 100 });
  const res = await h.call("POST", "/api/v1/sites", {
    key: org.key,
    body: { name: "Lumen", slug: `lumen-${crypto.randomUUID().slice(0, 8)}` },
  });
  return { org, siteId: ((await res.json()) as { site: { id: string } }).site.id };
}

async function renderOf(site: Site, body: Record<string, unknown>): Promise<Render> {
  const { org, siteId } = site;
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

const credits = async (site: Site) =>
  (
    await h.db
      .select({ c: organizations.credits })
      .from(organizations)
      .where(eq(organizations.id, site.org.org.id))
  )[0].c;

const projectOf = async (site: Site) =>
  (await h.db.select().from(screenshotProjects).where(eq(screenshotProjects.siteId, site.siteId)))[0];

/** The render daemon's Prometheus counters, read as numbers. */
async function metricsText(): Promise<string> {
  const res = await fetch(daemon.metricsUrl?.replace("0.0.0.0", "127.0.0.1") ?? "");
  expect(res.headers.get("content-type")).toStartWith("text/plain");
  return res.text();
}
const counter = (text: string, name: string) =>
  Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);

describe("render daemon end to end (API → in-process queue → Chromium → library)", () => {
  test("a render films the page, frames it 1440×900 and lands in the library as done", async () => {
    const site = await freshSite();
    const r = await renderOf(site, { url: pages.url("/"), theme: "dark", chrome: "light" });
    expect(r).toMatchObject({ status: "done", error: null, warnings: [] });
    expect(r.imageUrl).toStartWith(`/api/media/site-media/${site.siteId}/`);
    // A 1440 px wide capture (the default viewport) is framed 16:10 at its width.
    expect([r.width, r.height]).toEqual([1440, 900]);
    const key = decodeURIComponent((r.imageUrl as string).replace("/api/media/", ""));
    const [file] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.key, key));
    expect(file).toMatchObject({ siteId: site.siteId, source: "screenshot", width: 1440, height: 900 });
    // The stored bytes, read by a decoder that is not ours (Skia, through @napi-rs/canvas).
    const stored = await h.ctx.store.get(key);
    const bytes = Buffer.from(await new Response(stored!.body).arrayBuffer());
    const image = await loadImage(bytes);
    expect([image.width, image.height]).toEqual([1440, 900]);
    expect(await credits(site)).toBe(90);
    // Naming a theme filmed both variants.
    const v = (await projectOf(site)).variants as ProjectVariants;
    expect(Object.keys(v).sort()).toEqual(["dark", "first", "light"]);
  }, 120_000);

  test("a new look re-composes the stored capture without filming; recapture films again", async () => {
    const site = await freshSite();
    const url = pages.url("/?look");
    expect((await renderOf(site, { url, theme: "dark" })).status).toBe("done");
    const before = (await projectOf(site)).variants as ProjectVariants;
    const hitsBefore = pages.hits.get("/") ?? 0;
    const r = await renderOf(site, { url, theme: "light", chrome: "none", framing: 0.8 });
    expect(r.status).toBe("done");
    expect(pages.hits.get("/") ?? 0).toBe(hitsBefore);
    expect(((await projectOf(site)).variants as ProjectVariants).light?.filmedAt).toBe(
      before.light?.filmedAt,
    );
    const again = await renderOf(site, { url, recapture: true });
    expect(again.status).toBe("done");
    expect(pages.hits.get("/") ?? 0).toBeGreaterThan(hitsBefore);
    // Omitting the theme frames the first captured variant (dark was named first).
    expect(((await projectOf(site)).variants as ProjectVariants).first).toBe("dark");
  }, 180_000);

  test("a page that redirects to a sign-in form gives a done render with a login warning", async () => {
    const r = await renderOf(await freshSite(), { url: pages.url("/app") });
    expect(r.status).toBe("done");
    expect(r.warnings?.join(" ")).toMatch(/login/i);
  }, 120_000);

  test("after sign-in, later screenshots of the site start with the stored session", async () => {
    const site = await freshSite();
    const res = await h.call("POST", `/api/v1/sites/${site.siteId}/media/screenshot-login`, {
      key: site.org.key,
      body: { url: pages.url("/members") },
    });
    const token = new URL(((await res.json()) as { loginUrl: string }).loginUrl).pathname
      .split("/")
      .pop() as string;
    const before = await renderOf(site, { url: pages.url("/members") });
    expect(before.warnings?.join(" ")).toMatch(/login/i);
    await finishLogin(h.ctx, token, {
      cookies: [{ name: "sid", value: "owner", domain: "127.0.0.1", path: "/" }],
      localStorage: {},
    });
    const after = await renderOf(site, { url: pages.url("/members"), recapture: true });
    expect(after).toMatchObject({ status: "done", warnings: [] });
  }, 120_000);

  test("a render that fails for good ends failed with its error, refunded exactly once", async () => {
    const site = await freshSite();
    const r = await renderOf(site, { url: "https://no-such-host.invalid/" });
    expect(r.status).toBe("failed");
    expect(r.error).toBeTruthy();
    expect(r.imageUrl).toBeNull();
    expect(await credits(site)).toBe(100);
    const refunds = await h.db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.orgId, site.org.org.id), eq(creditLedger.reason, "screenshot_refund")));
    expect(refunds).toHaveLength(1);
  }, 120_000);

  test("GET /metrics reports queue depth, renders by outcome and time per stage", async () => {
    const before = await metricsText();
    const site = await freshSite();
    expect((await renderOf(site, { url: pages.url("/?metrics") })).status).toBe("done");
    expect((await renderOf(site, { url: "https://no-such-host.invalid/metrics" })).status).toBe("failed");
    const after = await metricsText();
    expect(after).toMatch(/^render_queue_depth 0$/m);
    const delta = (name: string) => counter(after, name) - counter(before, name);
    expect(delta('renders_total\\{outcome="done"\\}')).toBe(1);
    expect(delta('renders_total\\{outcome="failed"\\}')).toBe(1);
    // The alert rules' inputs (infra/prometheus/render-alerts.yaml): refunds and whole-render latency.
    expect(delta("render_refunds_total")).toBe(1);
    expect(delta("render_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    for (const stage of ["film", "compose", "store"])
      expect(delta(`render_stage_seconds_count\\{stage="${stage}"\\}`)).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
