import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  PAGE_SCAN_RETRY_AFTER_S,
  PAGE_SCAN_TENANT_RUNNING,
  PAGE_SCAN_TENANT_WAITING,
  PAGE_SCAN_WORKERS,
} from "@site/domain/content";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Issue 25 item 3: one organization's pathological page writes do not stall another's (decision 0612).

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

async function siteOf(who: { key: string }) {
  const res = await h.call("POST", "/api/v1/sites", {
    key: who.key,
    body: { name: "S", slug: `f-${uniq()}` },
  });
  return ((await res.json()) as Json).site.id as string;
}

async function write(who: { key: string }, siteId: string, content: string) {
  const t0 = performance.now();
  const res = await h.call("POST", `/api/v1/sites/${siteId}/pages`, {
    key: who.key,
    body: { path: `/p-${uniq()}`, title: "T", content },
  });
  const body = (await res.json()) as Json;
  return { status: res.status, body, retryAfter: res.headers.get("retry-after"), ms: performance.now() - t0 };
}

describe("page-write parsing is shared fairly between organizations", () => {
  test("one organization floods with pathological writes: another's one-line write stays quick; the flooder gets 429 with Retry-After once over its share", async () => {
    expect(PAGE_SCAN_WORKERS).toBeGreaterThanOrEqual(2);
    const flooder = await h.seedOrg();
    const victim = await h.seedOrg();
    const [floodSite, victimSite] = await Promise.all([siteOf(flooder), siteOf(victim)]);

    // The victim's usual time, quiet.
    const quiet: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await write(victim, victimSite, `One line ${uniq()}.`);
      expect(r.status).toBe(201);
      quiet.push(r.ms);
    }
    const usual = Math.max(...quiet);

    // Each write differs, so neither the cache nor the "ran out before" memory answers it.
    const n = PAGE_SCAN_TENANT_RUNNING + PAGE_SCAN_TENANT_WAITING + 6;
    const flood = Array.from({ length: n }, (_, i) =>
      write(flooder, floodSite, `${"*a".repeat(100_000)}\n\n${i} ${uniq()}`),
    );
    await Bun.sleep(500);
    const during = await write(victim, victimSite, `One line while another floods ${uniq()}.`);
    expect(during.status).toBe(201);
    // Generous: the victim's write takes no more than a multiple of its quiet time, or 3 s. Before the
    // fix it waited behind every flooding parse (about 4 s of CPU each, one worker): tens of seconds.
    expect(during.ms).toBeLessThan(Math.max(3_000, 20 * usual));

    const answers = await Promise.all(flood);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(n - PAGE_SCAN_TENANT_RUNNING - PAGE_SCAN_TENANT_WAITING);
    for (const r of refused) {
      expect(r.body.error.code).toBe("RATE_LIMITED");
      expect(r.retryAfter).toBe(String(PAGE_SCAN_RETRY_AFTER_S));
      expect(r.body.error.message).toContain("this organization");
    }
    // The admitted ones ran out of their CPU budget: 400 with a sentence naming it, never a 500.
    const parsed = answers.filter((a) => a.status !== 429);
    expect(parsed.length).toBeGreaterThan(0);
    for (const r of parsed) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.message).toContain("CPU time");
    }
    // Once the flood is over the flooder writes again.
    expect((await write(flooder, floodSite, "Back to normal.")).status).toBe(201);
  }, 180_000);
});
