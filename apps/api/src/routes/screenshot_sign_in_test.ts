import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { html, servePages, until } from "@site/browser/testing";
import { screenshotLoginLinks, siteBrowserSessions } from "@site/db";
import { loadBrowserSession } from "@site/domain/screenshots";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// A sign-in form at a known spot: Enter in the field stores a cookie and a local-storage token.
const pages = servePages({
  "/signin": () =>
    html(`<!doctype html><body style="margin:0"><input id="email" style="position:absolute;left:100px;top:100px;width:300px;height:40px">
<script>document.getElementById("email").addEventListener("keydown",(e)=>{if(e.key==="Enter"){const v=e.target.value;
document.cookie="sid="+encodeURIComponent(v)+"; path=/";localStorage.setItem("token",v);document.title="signed in";}});</script></body>`),
});
let h: TestApp;
let base: string;
let org: Awaited<ReturnType<TestApp["seedOrg"]>>;
let siteId: string;

beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: pages.host } });
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${h.app.server?.port}`;
  org = await h.seedOrg();
  const res = await h.call("POST", "/api/v1/sites", {
    key: org.key,
    body: { name: "S", slug: `s-${Date.now()}` },
  });
  siteId = ((await res.json()) as { site: { id: string } }).site.id;
});
afterAll(async () => {
  await h.app.stop(true);
  await h.close();
  pages.stop();
});

async function newLink(app: TestApp = h, key = org.key, site = siteId) {
  const res = await app.call("POST", `/api/v1/sites/${site}/media/screenshot-login`, {
    key,
    body: { url: pages.url("/signin") },
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { loginUrl: string; interactive: boolean };
  const path = new URL(body.loginUrl).pathname;
  return { ...body, path, token: path.split("/").pop() as string };
}

type Msg = { t: string; data?: string; message?: string; code?: string };

function connect(path: string, at = base) {
  const ws = new WebSocket(`${at.replace("http", "ws")}${path}/ws`);
  const inbox: Msg[] = [];
  ws.onmessage = (ev) => inbox.push(JSON.parse(String(ev.data)) as Msg);
  const send = (m: unknown) => ws.send(JSON.stringify(m));
  return { ws, inbox, send };
}

describe("hosted sign-in", () => {
  test("the link shows a live screencast; forwarded input signs in; Done stores the session encrypted", async () => {
    const link = await newLink();
    expect(link.interactive).toBe(true);
    const page = await fetch(`${base}${link.path}`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain("new WebSocket");
    expect(text).toContain("Done");

    const c = connect(link.path);
    await until(async () => c.inbox.some((m) => m.t === "frame"), 30_000);
    const frame = c.inbox.find((m) => m.t === "frame") as Msg;
    expect(Buffer.from(frame.data as string, "base64").subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    c.send({ t: "mouse", type: "down", x: 250, y: 120 });
    c.send({ t: "mouse", type: "up", x: 250, y: 120 });
    c.send({ t: "text", text: "owner@lumen.test" });
    c.send({ t: "key", key: "Enter" });
    c.send({ t: "key", key: "rm -rf" }); // not an allowed key: ignored
    c.send({ t: "done" });
    await until(async () => c.inbox.some((m) => m.t === "saved" || m.t === "error"), 30_000);
    expect(c.inbox.filter((m) => m.t === "error")).toEqual([]);

    const [row] = await h.db.select().from(siteBrowserSessions).where(eq(siteBrowserSessions.siteId, siteId));
    expect(row.ciphertext).not.toContain("owner");
    const session = await loadBrowserSession(h.ctx, siteId);
    expect(session?.cookies).toContainEqual(
      expect.objectContaining({ name: "sid", value: encodeURIComponent("owner@lumen.test") }),
    );
    expect(session?.localStorage).toEqual({ [`http://${pages.host}`]: { token: "owner@lumen.test" } });

    // Used once: the page and its socket refuse it now.
    expect((await fetch(`${base}${link.path}`)).status).toBe(410);
    const again = connect(link.path);
    await until(async () => again.inbox.some((m) => m.t === "error"), 10_000);
  }, 60_000);

  test("an expired link is refused", async () => {
    const link = await newLink();
    await h.db
      .update(screenshotLoginLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(screenshotLoginLinks.sourceUrl, pages.url("/signin")));
    const res = await fetch(`${base}${link.path}`);
    expect(res.status).toBe(410);
    expect(await res.text()).toContain("not valid");
    expect((await fetch(`${base}/screenshot-login/not-a-token`)).status).toBe(410);
  });

  test("without a browser the link's page explains that credentials are given by hand", async () => {
    const app = await buildTestApp({
      env: { CHROMIUM_PATH: "/nonexistent/chromium", FETCH_ALLOW_HOSTS: pages.host },
    });
    try {
      const o = await app.seedOrg();
      const res = await app.call("POST", "/api/v1/sites", {
        key: o.key,
        body: { name: "N", slug: `n-${Date.now()}` },
      });
      const sid = ((await res.json()) as { site: { id: string } }).site.id;
      const link = await newLink(app, o.key, sid);
      expect(link.interactive).toBe(false);
      const page = await app.app.handle(new Request(`http://localhost${link.path}`));
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain("by hand");
      expect(text).not.toContain("new WebSocket");
    } finally {
      await app.close();
    }
  });
});

describe("hosted sign-in browsers are capped per organization as well as in total (17.10)", () => {
  test("a second browser of one organization is refused naming the organization's cap; a full server names its own", async () => {
    const app = await buildTestApp({
      env: { FETCH_ALLOW_HOSTS: pages.host, LOGIN_BROWSERS_MAX: "2", LOGIN_BROWSERS_PER_ORG: "1" },
    });
    app.app.listen({ port: 0, hostname: "127.0.0.1" });
    const at = `http://127.0.0.1:${app.app.server?.port}`;
    const opened: WebSocket[] = [];
    try {
      const orgWithSite = async () => {
        const o = await app.seedOrg();
        const res = await app.call("POST", "/api/v1/sites", {
          key: o.key,
          body: { name: "C", slug: `c-${Math.random().toString(36).slice(2, 9)}` },
        });
        return { key: o.key, siteId: ((await res.json()) as { site: { id: string } }).site.id };
      };
      const open = async (path: string) => {
        const c = connect(path, at);
        opened.push(c.ws);
        await until(async () => c.inbox.some((m) => m.t === "frame" || m.t === "error"), 30_000);
        return c;
      };
      const [a, b, c] = [await orgWithSite(), await orgWithSite(), await orgWithSite()];
      const a1 = await open((await newLink(app, a.key, a.siteId)).path);
      expect(a1.inbox.filter((m) => m.t === "error")).toEqual([]);

      // The same organization, another link: refused for its own cap, and told so.
      const a2Link = await newLink(app, a.key, a.siteId);
      const a2 = await open(a2Link.path);
      const refused = a2.inbox.find((m) => m.t === "error") as Msg;
      expect(refused.code).toBe("ORG_LOGIN_BROWSER_LIMIT");
      expect(refused.message).toContain("Your organization already has 1 hosted sign-in browser open");

      // Another organization still gets one; a third finds the server full, and is told that instead.
      const b1 = await open((await newLink(app, b.key, b.siteId)).path);
      expect(b1.inbox.filter((m) => m.t === "error")).toEqual([]);
      const c1 = await open((await newLink(app, c.key, c.siteId)).path);
      const full = c1.inbox.find((m) => m.t === "error") as Msg;
      expect(full.code).toBe("LOGIN_BROWSERS_BUSY");
      expect(full.message).toContain("All 2 hosted sign-in browsers of this server are in use");

      // Once A's first browser closes, its second link (still unused) opens.
      a1.ws.close();
      const again = await until(async () => {
        const x = await open(a2Link.path);
        if (x.inbox.some((m) => m.t === "frame")) return x;
        x.ws.close();
        await new Promise((r) => setTimeout(r, 200));
        return null;
      }, 30_000);
      expect(again.inbox.some((m) => m.t === "frame")).toBe(true);
    } finally {
      for (const ws of opened) ws.close();
      await new Promise((r) => setTimeout(r, 500));
      await app.app.stop(true);
      await app.close();
    }
  }, 90_000);
});
