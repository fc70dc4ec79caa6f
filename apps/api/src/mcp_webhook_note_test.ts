import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// queue_screenshot and create_clip say when a webhook will report how the job ends (decision 0844).
// Nothing is delivered here (no dispatcher runs): the receiver URL only has to pass the guard.
const HOOK_HOST = "127.0.0.1:9";
let h: TestApp;
let mcp: AppServer;
beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: HOOK_HOST } });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await h.close();
});

const ALL = ["webhooks:write", "sites:write", "content:read", "content:write", "social:write"] as const;

async function addHook(key: string, path: string, events: string[], enabled = true) {
  const res = await h.call("POST", "/api/v1/webhooks", {
    key,
    body: { url: `http://${HOOK_HOST}${path}`, events },
  });
  expect(res.status).toBe(201);
  const { webhook } = (await res.json()) as { webhook: { id: string; url: string } };
  if (!enabled)
    expect(
      (await h.call("PATCH", `/api/v1/webhooks/${webhook.id}`, { key, body: { enabled: false } })).status,
    ).toBe(200);
  return webhook;
}

/** Calls `name` as the organization's key; answers the structured value and the text. */
async function run(key: string, name: string, args: Record<string, unknown>) {
  const client = await mcpClient(mcp, key);
  try {
    const res = await callTool(client, name, args);
    expect(res.isError, res.content[0]?.text).toBeFalsy();
    return { value: res.structuredContent as Record<string, any>, text: res.content[0]!.text };
  } finally {
    await client.close();
  }
}

describe("tool results say a webhook will follow", () => {
  test("queue_screenshot lists the endpoints subscribed to screenshot events, and only those", async () => {
    const o = await h.seedOrg({ credits: 100, scopes: [...ALL] });
    const site = await h.newSite(o.key);
    const args = { siteId: site.id, url: "https://example.com/" };

    const none = await run(o.key, "queue_screenshot", args);
    expect(none.value.webhooks).toBeUndefined();
    expect(none.text).not.toContain("webhook");

    // Not about screenshots, or disabled: still nothing to say.
    await addHook(o.key, "/clips", ["clip.completed", "site.published"]);
    await addHook(o.key, "/off", ["screenshot.completed"], false);
    const still = await run(o.key, "queue_screenshot", args);
    expect(still.value.webhooks).toBeUndefined();
    expect(still.text).not.toContain("webhook will follow");

    const shots = await addHook(o.key, "/shots", [
      "screenshot.failed",
      "media.created",
      "screenshot.completed",
    ]);
    const queued = await run(o.key, "queue_screenshot", args);
    expect(queued.value).toMatchObject({ status: "pending", credits: 10 });
    expect(queued.value.webhooks).toEqual([
      { id: shots.id, url: shots.url, events: ["screenshot.completed", "screenshot.failed"] },
    ]);
    expect(queued.text).toContain(
      `A signed webhook will follow when it ends: ${shots.url} (screenshot.completed, screenshot.failed)`,
    );

    // An estimate queues nothing: nothing will follow.
    const estimate = await run(o.key, "queue_screenshot", { ...args, estimateOnly: true });
    expect(estimate.value).toEqual({ estimate: true, credits: 10 });
    expect(estimate.text).not.toContain("webhook");
  });

  test("create_clip lists the endpoints subscribed to clip events; another organization's are not shown", async () => {
    const other = await h.seedOrg({ scopes: [...ALL] });
    await addHook(other.key, "/theirs", ["clip.completed", "clip.failed"]);
    const o = await h.seedOrg({ credits: 100, scopes: [...ALL] });
    const args = { url: "https://example.com/", motion: "scroll" };

    const none = await run(o.key, "create_clip", args);
    expect(none.value.webhooks).toBeUndefined();
    expect(none.text).not.toContain("webhook");

    const failed = await addHook(o.key, "/clip-failed", ["clip.failed"]);
    const both = await addHook(o.key, "/clip-both", ["clip.completed", "clip.failed"]);
    const queued = await run(o.key, "create_clip", args);
    expect(queued.value).toMatchObject({ status: "pending", credits: 30 });
    expect(queued.value.webhooks).toEqual([
      { id: failed.id, url: failed.url, events: ["clip.failed"] },
      { id: both.id, url: both.url, events: ["clip.completed", "clip.failed"] },
    ]);
    expect(queued.text).toContain(`${failed.url} (clip.failed); ${both.url} (clip.completed, clip.failed)`);
    expect(queued.text).not.toContain("/theirs");
  });
});
