import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBrowser } from "@site/browser";
import {
  descendsFrom,
  ESCAPES,
  type Forbidden,
  html,
  processTable,
  serveEscapes,
  serveForbidden,
  servePages,
  until,
} from "@site/browser/testing";
import { createTestDatabase } from "@site/db/testing";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { testContext } from "@site/domain/testing";
import { spawnApi } from "../testing/mod.ts";

type Json = any;

// The hosted sign-in as users reach it: the API started by its real entry points (`bun run apps/api`,
// and `./scripts/start`, the all-in-one process), a sign-in link made through the API, its page's
// WebSocket opened from outside, a screencast frame received; then SIGTERM ends the process and the
// hosted Chromium with it. Issue 25.1: the production listener never upgraded ("Expected a websocket
// connection") while the test listener did.
const pages = servePages({
  "/signin": () => html(`<!doctype html><body style="background:#fff"><input id="email"></body>`),
});
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ctx: Context;
let forbidden: Forbidden;
let escapes: ReturnType<typeof serveEscapes>;
beforeAll(async () => {
  forbidden = await serveForbidden();
  escapes = serveEscapes(forbidden);
  db = await createTestDatabase();
  ctx = testContext(db.db);
});
afterAll(async () => {
  pages.stop();
  escapes.server.stop(true);
  await forbidden.close();
  await db.close();
});

async function seedKey(): Promise<string> {
  // One organization per key: the per-organization cap applies to each.
  const org = await createOrganization(ctx, { name: "Entry", siteLimit: 5 });
  const user = await createMember(ctx, {
    orgId: org.id,
    email: `${crypto.randomUUID()}@example.test`,
    role: "owner",
  });
  const { key } = await createApiKey(ctx, {
    orgId: org.id,
    userId: user.id,
    scopes: ["content:write", "sites:write"],
  });
  return key;
}

/** Processes started under `pid` (its Chromium among them). */
function descendants(pid: number): number[] {
  const table = processTable();
  return [...table.keys()].filter((p) => descendsFrom(table, p, pid));
}

const ENTRIES: [string, string[] | undefined][] = [
  ["bun run apps/api", undefined],
  ["./scripts/start", ["./scripts/start"]],
];

describe.skipIf(!findBrowser(null))("the hosted sign-in works in the process users run", () => {
  test.each(ENTRIES)(
    "%s: the sign-in link's WebSocket upgrades and streams frames; SIGTERM exits 0 and ends the hosted browser",
    async (_name, command) => {
      const dataDir = mkdtempSync(join(tmpdir(), "sign-in-entry-"));
      chmodSync(dataDir, 0o755);
      const api = await spawnApi(
        {
          DATABASE_URL: db.url,
          DATA_DIR: dataDir,
          FETCH_ALLOW_HOSTS: pages.host,
          CHROMIUM_PATH: findBrowser(null)!,
          SHUTDOWN_GRACE_MS: "2000",
        },
        { command },
      );
      let ws: WebSocket | null = null;
      try {
        const key = await seedKey();
        const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
        const site = (await (
          await fetch(`${api.url}/api/v1/sites`, {
            method: "POST",
            headers: auth,
            body: JSON.stringify({ name: "S", slug: `entry-${crypto.randomUUID().slice(0, 8)}` }),
          })
        ).json()) as Json;
        const made = await fetch(`${api.url}/api/v1/sites/${site.site.id}/media/screenshot-login`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ url: pages.url("/signin") }),
        });
        expect(made.status).toBe(201);
        const link = (await made.json()) as Json;
        expect(link.interactive).toBe(true);
        const path = new URL(link.loginUrl).pathname;
        const page = await fetch(`${api.url}${path}`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain("new WebSocket");

        const inbox: Json[] = [];
        let closed: { code: number; reason: string } | null = null;
        ws = new WebSocket(`${api.url.replace(/^http/, "ws")}${path}/ws`);
        ws.onmessage = (ev) => inbox.push(JSON.parse(String(ev.data)));
        ws.onclose = (ev) => {
          closed = { code: ev.code, reason: ev.reason };
        };
        // The old listener refused the upgrade (400 "Expected a websocket connection"): the socket closed.
        const frame = await until(
          async () =>
            inbox.find((m) => m.t === "frame" || m.t === "error") ?? (closed && { t: "closed", ...closed }),
          45_000,
        );
        expect(frame.t).toBe("frame");
        expect(Buffer.from(frame.data, "base64").subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
        const chromium = descendants(api.proc.pid).filter((p) =>
          processTable().get(p)?.cmdline.includes("--remote-debugging"),
        );
        expect(chromium.length).toBeGreaterThan(0);

        // SIGTERM: the socket is closed with a reason the page shows, the process exits 0, and no
        // hosted Chromium outlives it.
        api.proc.kill("SIGTERM");
        expect(await api.proc.exited).toBe(0);
        await until(async () => closed, 5000);
        expect(closed!.code).toBe(1001);
        expect(closed!.reason).toContain("restarting");
        expect(api.logs()).toContain('"socketsClosed":1');
        const table = processTable();
        expect(chromium.filter((p) => table.has(p))).toEqual([]);
      } finally {
        ws?.close();
        await api.kill();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});

type Msg = { t: string; data?: string; code?: string; message?: string };

/** A site of a fresh organization and a sign-in link to `url`, made through the API at `base`. */
async function linkFor(base: string, url: string, key?: string) {
  const k = key ?? (await seedKey());
  const auth = { authorization: `Bearer ${k}`, "content-type": "application/json" };
  const site = (await (
    await fetch(`${base}/api/v1/sites`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "S", slug: `l-${crypto.randomUUID().slice(0, 8)}` }),
    })
  ).json()) as Json;
  const made = await fetch(`${base}/api/v1/sites/${site.site.id}/media/screenshot-login`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ url }),
  });
  expect(made.status).toBe(201);
  return { key: k, path: new URL(((await made.json()) as Json).loginUrl).pathname as string };
}

/** Opens a link's socket and waits for its first frame or error. */
async function openLink(base: string, path: string) {
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}${path}/ws`);
  const inbox: Msg[] = [];
  ws.onmessage = (ev) => inbox.push(JSON.parse(String(ev.data)) as Msg);
  const first = await until(async () => inbox.find((m) => m.t === "frame" || m.t === "error"), 45_000);
  return { ws, inbox, first, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}

describe.skipIf(!findBrowser(null))(
  "the hosted sign-in browser of the running API (bun run apps/api)",
  () => {
    let api: Awaited<ReturnType<typeof spawnApi>>;
    let dataDir: string;
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "sign-in-guard-"));
      api = await spawnApi({
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        FETCH_ALLOW_HOSTS: `${pages.host},127.0.0.1:${escapes.port}`,
        CHROMIUM_PATH: findBrowser(null)!,
        LOGIN_BROWSERS_MAX: "2",
        LOGIN_BROWSERS_PER_ORG: "1",
      });
    });
    afterAll(async () => {
      await api?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test("reaches nothing the render browser may not: loopback ports, link-local, workers, service workers, WebRTC, a clicked link", async () => {
      const { path } = await linkFor(api.url, `${escapes.origin}/all`);
      const c = await openLink(api.url, path);
      try {
        expect(c.first.t).toBe("frame");
        const kinds = [...ESCAPES, "fetch-loopback", "fetch-link-local", "img-loopback"];
        // Every attempt was made and ended (each reported), and none read the forbidden service.
        await until(async () => kinds.every((k) => escapes.reports.has(k)), 40_000);
        for (const k of kinds) expect(`${k}: ${escapes.reports.get(k)}`).not.toContain("internal-token");
        expect(escapes.reports.get("img-loopback")).toBe("error");
        // The person at the screen clicks a link to the forbidden port: the click arrives, the
        // navigation is refused.
        c.send({ t: "mouse", type: "down", x: 100, y: 100 });
        c.send({ t: "mouse", type: "up", x: 100, y: 100 });
        await until(async () => escapes.reports.get("click"), 20_000);
        await Bun.sleep(1500);
        expect(forbidden.accepted()).toBe(0);
        expect(forbidden.datagrams()).toBe(0);
      } finally {
        c.ws.close();
      }
    }, 120_000);

    test("login browsers are capped per organization and in total", async () => {
      const opened: WebSocket[] = [];
      try {
        // The previous test's browser closes with its socket; wait until the server counts none.
        const target = pages.url("/signin");
        const a = await linkFor(api.url, target);
        const a1 = await until(async () => {
          const x = await openLink(api.url, a.path);
          if (x.first.t === "frame") return x;
          x.ws.close();
          await Bun.sleep(300);
          return null;
        }, 30_000);
        opened.push(a1.ws);
        const a2 = await openLink(api.url, (await linkFor(api.url, target, a.key)).path);
        opened.push(a2.ws);
        expect(a2.first.code).toBe("ORG_LOGIN_BROWSER_LIMIT");
        const b1 = await openLink(api.url, (await linkFor(api.url, target)).path);
        opened.push(b1.ws);
        expect(b1.first.t).toBe("frame");
        const c1 = await openLink(api.url, (await linkFor(api.url, target)).path);
        opened.push(c1.ws);
        expect(c1.first.code).toBe("LOGIN_BROWSERS_BUSY");
      } finally {
        for (const ws of opened) ws.close();
      }
    }, 120_000);
  },
);
