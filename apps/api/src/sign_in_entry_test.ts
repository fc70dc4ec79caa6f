import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBrowser } from "@site/browser";
import { descendsFrom, html, processTable, servePages, until } from "@site/browser/testing";
import { createLogger, loadConfig, systemClock } from "@site/config";
import { createTestDatabase } from "@site/db/testing";
import { createApiKey, createMember, createOrganization, type Context } from "@site/domain/core";
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
beforeAll(async () => {
  db = await createTestDatabase();
  ctx = {
    config: loadConfig({ SECRET_KEY: "test-secret-key-0123456789", DATA_DIR: "/tmp/site-test-data" }),
    db: db.db,
    clock: systemClock,
    log: createLogger("silent" as never),
  };
});
afterAll(async () => {
  pages.stop();
  await db.close();
});

async function seedKey(): Promise<string> {
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
