import { describe, expect, test } from "bun:test";
import { createApiKey, type Scope } from "@site/domain/core";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

// queue_screenshot and create_clip say when a webhook will report how the job ends (decision 0844).
// Nothing is delivered here (no dispatcher runs): the receiver URL only has to pass the guard.
const HOOK_HOST = "127.0.0.1:9";
const bed = mcpTestBed({ env: { FETCH_ALLOW_HOSTS: HOOK_HOST } });

const ALL = ["webhooks:write", "sites:write", "content:read", "content:write", "social:write"] as const;

async function addHook(key: string, path: string, events: string[], enabled = true) {
  const res = await bed.h.call("POST", "/api/v1/webhooks", {
    key,
    body: { url: `http://${HOOK_HOST}${path}`, events },
  });
  expect(res.status).toBe(201);
  const { webhook } = (await res.json()) as { webhook: { id: string; url: string } };
  if (!enabled)
    expect(
      (await bed.h.call("PATCH", `/api/v1/webhooks/${webhook.id}`, { key, body: { enabled: false } })).status,
    ).toBe(200);
  return webhook;
}

/** Calls `name` as the organization's key; answers the structured value and the text. */
async function run(key: string, name: string, args: Record<string, unknown>) {
  const client = await mcpClient(bed.mcp, key);
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
    const o = await bed.h.seedOrg({ credits: 100, scopes: [...ALL] });
    const site = await bed.h.newSite(o.key);
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
    const other = await bed.h.seedOrg({ scopes: [...ALL] });
    await addHook(other.key, "/theirs", ["clip.completed", "clip.failed"]);
    const o = await bed.h.seedOrg({ credits: 100, scopes: [...ALL] });
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

// Issue 38 "Webhook URLs leak to weaker keys" (CONTRACT "Webhooks, second pass": only keys with
// webhooks:write may see an endpoint's URL; other answers may say how many endpoints, not where).
describe("endpoint URLs are shown to webhooks:write keys only", () => {
  /** A second key of `o`'s organization with `scopes` only. */
  async function keyOf(o: { org: { id: string }; user: { id: string } }, scopes: Scope[]) {
    return (await createApiKey(bed.h.ctx, { orgId: o.org.id, userId: o.user.id, scopes })).key;
  }

  test("queue_screenshot (content:write) and create_clip (social:write) say how many endpoints, never where", async () => {
    const o = await bed.h.seedOrg({ credits: 200, scopes: [...ALL] });
    const site = await bed.h.newSite(o.key);
    // A receiver URL carrying a token in its query, as receivers often do.
    const token = "tok_9f8e7d6c5b4a";
    const shots = await addHook(o.key, `/shots?token=${token}`, [
      "screenshot.completed",
      "screenshot.failed",
    ]);
    const clips = await addHook(o.key, `/clips?token=${token}`, ["clip.failed"]);
    const content = await keyOf(o, ["content:read", "content:write"]);
    const social = await keyOf(o, ["social:write"]);
    // These keys are refused on the webhook routes themselves.
    expect((await bed.h.call("GET", "/api/v1/webhooks", { key: content })).status).toBe(403);
    expect((await bed.h.call("GET", "/api/v1/webhooks", { key: social })).status).toBe(403);

    const shot = await run(content, "queue_screenshot", { siteId: site.id, url: "https://example.com/" });
    const clip = await run(social, "create_clip", { url: "https://example.com/", motion: "scroll" });
    for (const [answer, hook, events] of [
      [shot, shots, ["screenshot.completed", "screenshot.failed"]],
      [clip, clips, ["clip.failed"]],
    ] as const) {
      const all = JSON.stringify(answer.value) + answer.text;
      expect(all).not.toContain(token);
      expect(all).not.toContain(HOOK_HOST);
      expect(answer.value.webhooks).toEqual([{ id: hook.id, events }]);
      expect(answer.text).toContain(
        "A signed webhook will follow when it ends: 1 endpoint of the organization",
      );
    }

    // REST's answers to the same keys carry no endpoint either.
    const rest = await bed.h.call("POST", `/api/v1/sites/${site.id}/media/screenshot`, {
      key: content,
      body: { url: "https://example.com/" },
    });
    expect(rest.status).toBe(202);
    expect(await rest.text()).not.toContain(token);
    const restClip = await bed.h.call("POST", "/api/v1/social/media/clips", {
      key: social,
      body: { url: "https://example.com/", motion: "scroll" },
    });
    expect(restClip.status).toBe(202);
    expect(await restClip.text()).not.toContain(token);

    // A key that may manage webhooks still sees where.
    const full = await run(o.key, "queue_screenshot", { siteId: site.id, url: "https://example.com/" });
    expect(full.value.webhooks).toEqual([
      { id: shots.id, url: shots.url, events: ["screenshot.completed", "screenshot.failed"] },
    ]);
    expect(full.text).toContain(shots.url);
  });
});
