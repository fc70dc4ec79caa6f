import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setSitePublished, siteById } from "@site/domain/sites";
import { simpleParser } from "mailparser";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../../testing/mod.ts";

type Json = any;
let h: TestApp;
let api: ApiProcess;
let dataDir: string;
beforeAll(async () => {
  h = await buildTestApp();
  dataDir = mkdtempSync(join(tmpdir(), "news-outbox-"));
  api = await spawnApi({
    DATABASE_URL: h.databaseUrl,
    DATA_DIR: dataDir,
    SMTP_URL: "",
    NEWSLETTER_SWEEP_EVERY_MS: "200",
  });
});
afterAll(async () => {
  await api.kill();
  await h.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const outbox = () => {
  try {
    return readdirSync(join(dataDir, "outbox")).filter((f) => f.endsWith(".eml"));
  } catch {
    return [];
  }
};
const until = async (what: string, check: () => boolean) => {
  const end = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
};

describe("the API alone, in-process queue, no SMTP_URL", () => {
  test("says at start that mail goes to DATA_DIR/outbox, and writes confirmations and campaign mail there as .eml", async () => {
    await until("the start-up line", () => api.logs().includes("SMTP_URL is not set"));
    expect(api.logs()).toContain(join(dataDir, "outbox"));
    const { key } = await h.seedOrg();
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const slug = `ob-${Date.now().toString(36)}`;
    const site = (await (await call("POST", "/api/v1/sites", { name: "Outbox", slug })).json()) as Json;
    await setSitePublished(h.ctx, await siteById(h.ctx, site.site.id), true);
    const sub = await fetch(`${api.url}/api/v1/public/sites/${slug}/subscribe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "dee@example.com" }),
    });
    expect(sub.status).toBe(202);
    await until("the confirmation file", () => outbox().some((f) => f.startsWith("confirm-")));
    const confirm = await simpleParser(
      readFileSync(join(dataDir, "outbox", outbox().find((f) => f.startsWith("confirm-"))!)),
    );
    expect(confirm.to).toBeDefined();
    const link = /https?:\/\/\S+confirm\?token=\S+/.exec(String(confirm.text))![0];
    expect((await fetch(`${api.url}${new URL(link).pathname}${new URL(link).search}`)).status).toBe(200);
    await call("POST", `/api/v1/sites/${site.site.id}/subscribers`, {
      subscribers: [{ email: "eve@example.com" }],
    });
    const c = (await (
      await call("POST", `/api/v1/sites/${site.site.id}/campaigns`, { subject: "Hello", html: "<p>Hi</p>" })
    ).json()) as Json;
    expect((await call("POST", `/api/v1/sites/${site.site.id}/campaigns/${c.campaign.id}/send`)).status).toBe(
      202,
    );
    await until("two campaign files", () => outbox().filter((f) => f.startsWith(c.campaign.id)).length === 2);
    const mails = await Promise.all(
      outbox()
        .filter((f) => f.startsWith(c.campaign.id))
        .map(async (f) => simpleParser(readFileSync(join(dataDir, "outbox", f)))),
    );
    expect(mails.map((m) => (Array.isArray(m.to) ? "" : m.to?.text)).sort()).toEqual([
      "dee@example.com",
      "eve@example.com",
    ]);
    for (const m of mails) expect(m.headerLines.some((l) => l.key === "list-unsubscribe-post")).toBe(true);
  });
});
