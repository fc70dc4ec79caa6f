import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { recordPublicBase } from "@site/runtime";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// One PUBLIC_BASE_URL in every process (CONTRACT "Mail replies…", issue 34, decision 1454): the API
// records its own in the database; a daemon started without one mails links of the recorded base; one
// whose base differs warns naming both. The daemon is a real process on the test database.

type Json = any;
const ROOT = new URL("../../../..", import.meta.url).pathname;
const API_BASE = "https://api.example.test";

let h: TestApp;
let sink: SmtpSink;
let dataDir: string;
beforeAll(async () => {
  sink = await startSmtpSink();
  h = await buildTestApp();
  dataDir = mkdtempSync(join(tmpdir(), "news-base-"));
  // What the API does at its start (openRuntime({ publicBase: "record" })).
  await recordPublicBase(h.ctx.db, API_BASE);
});
afterAll(async () => {
  await h.sql`delete from service_records where name = 'public_base_url'`;
  await h.close();
  await sink.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The sending process as the render daemon runs it; its output lines. */
function spawnSender(env: Record<string, string>) {
  const { PUBLIC_BASE_URL: _drop, ...rest } = process.env;
  const lines: string[] = [];
  const proc = Bun.spawn(["bun", "libs/domain/testing/newsletter_sender_child.ts"], {
    cwd: ROOT,
    env: {
      ...rest,
      DATABASE_URL: h.databaseUrl,
      REDIS_URL: "",
      SMTP_URL: sink.url,
      SMTP_RATE_PER_MINUTE: "0",
      NEWSLETTER_SWEEP_EVERY_MS: "200",
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
      const parts = buf.split("\n");
      buf = parts.pop() ?? "";
      lines.push(...parts);
    }
  };
  void read(proc.stdout as ReadableStream<Uint8Array>);
  void read(proc.stderr as ReadableStream<Uint8Array>);
  return { proc, lines };
}

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
};

describe("one public base URL across processes", () => {
  test("a daemon started without PUBLIC_BASE_URL mails links of the API's recorded base (and From at its host)", async () => {
    const { key } = await h.seedOrg();
    const site = (await (
      await h.call("POST", "/api/v1/sites", {
        key,
        body: { name: "Base", slug: `b-${Date.now().toString(36)}` },
      })
    ).json()) as Json;
    const siteId = site.site.id as string;
    const email = `base-${Date.now()}@example.com`;
    await h.call("POST", `/api/v1/sites/${siteId}/subscribers`, { key, body: { email } });
    const created = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/campaigns`, {
        key,
        body: { subject: `Base ${Date.now()}`, html: "<p>Hello</p>" },
      })
    ).json()) as Json;
    expect(
      (await h.call("POST", `/api/v1/sites/${siteId}/campaigns/${created.campaign.id}/send`, { key })).status,
    ).toBe(202);
    const daemon = spawnSender({});
    try {
      await until("the mail", () => sink.messages.some((m) => m.to.includes(email)));
      const mail = sink.messages.find((m) => m.to.includes(email))!;
      const unsubscribe = mail.parsed!.headerLines.find((l) => l.key === "list-unsubscribe")!.line;
      expect(unsubscribe).toContain(`<${API_BASE}/api/v1/public/newsletter/unsubscribe?token=`);
      expect(mail.parsed!.from!.value[0]!.address).toBe("newsletter@api.example.test");
      expect(daemon.lines.some((l) => l.includes("PUBLIC_BASE_URL taken from the API's record"))).toBe(true);
    } finally {
      daemon.proc.kill("SIGTERM");
      await daemon.proc.exited;
    }
  }, 60_000);

  test("a daemon whose PUBLIC_BASE_URL differs warns naming both", async () => {
    const daemon = spawnSender({ PUBLIC_BASE_URL: "http://127.0.0.1:3000" });
    try {
      await until("the warning", () =>
        daemon.lines.some((l) => l.includes("http://127.0.0.1:3000") && l.includes(API_BASE)),
      );
      expect(daemon.lines.find((l) => l.includes(API_BASE))).toContain("differs");
    } finally {
      daemon.proc.kill("SIGTERM");
      await daemon.proc.exited;
    }
  }, 60_000);
});
