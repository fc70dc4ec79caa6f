import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTestApp, type TestApp } from "@site/api/testing";
import { organizations } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { openFsStore } from "@site/storage";
import { failingStore } from "@site/storage/testing";
import { eq } from "drizzle-orm";
import { createRenderMetrics } from "./render_metrics.ts";
import type { RenderPipeline } from "./render_types.ts";
import { createRenderHandler } from "./worker.ts";

// A render whose store is full fails with a sentence for users: never an errno or a server path.
let h: TestApp;
let root: string;
let store: ReturnType<typeof failingStore>;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "render-full-"));
  store = failingStore(
    openFsStore({ root, publicBaseUrl: "http://127.0.0.1:3000", secretKey: "test-secret-key-0123456789" }),
    null,
  );
  h = await buildTestApp({ store });
});
afterAll(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

const fakePipeline: RenderPipeline = {
  film: async (s) => ({
    png: sampleImage("png", { width: 40, height: 30, size: 2000 }),
    width: 40,
    height: 30,
    finalUrl: s.url,
    warnings: [],
  }),
  compose: async () => ({
    bytes: sampleImage("webp", { width: 80, height: 60, size: 3000 }),
    width: 80,
    height: 60,
    contentType: "image/webp",
  }),
  clip: async () => {
    throw new Error("no clips in this test");
  },
  close: async () => {},
};

for (const fault of ["ENOSPC", "EROFS"] as const) {
  test(`a render whose last try meets ${fault} fails with a sentence and is refunded`, async () => {
    const { key, org } = await h.seedOrg({ credits: 50 });
    const site = (await (
      await h.call("POST", "/api/v1/sites", {
        key,
        body: { name: "R", slug: `r-${Date.now()}-${fault.toLowerCase()}` },
      })
    ).json()) as { site: { id: string } };
    const queued = await h.call("POST", `/api/v1/sites/${site.site.id}/media/screenshot`, {
      key,
      body: { url: "https://example.com/" },
    });
    expect(queued.status).toBe(202);
    const { renderId } = (await queued.json()) as { renderId: string };
    store.setFault(fault);
    const handler = createRenderHandler({
      ctx: h.ctx,
      pipeline: fakePipeline,
      metrics: createRenderMetrics(),
      log: h.ctx.log,
    });
    const job = {
      id: renderId,
      name: "render-screenshot" as const,
      data: { renderId },
      attempt: 3,
      attempts: 3,
      signal: new AbortController().signal,
    };
    await expect(handler(job)).rejects.toThrow();
    store.setFault(null);
    const poll = (await (
      await h.call("GET", `/api/v1/sites/${site.site.id}/media/screenshot/${renderId}`, { key })
    ).json()) as { status: string; error: string };
    expect(poll.status).toBe("failed");
    expect(poll.error).toMatch(/^File storage is (full|unavailable) right now/);
    expect(poll.error).not.toMatch(/E[A-Z]{3,}|\/srv|\/tmp|write '/);
    const [row] = await h.db.select().from(organizations).where(eq(organizations.id, org.id));
    expect(row!.credits).toBe(50);
  });
}
