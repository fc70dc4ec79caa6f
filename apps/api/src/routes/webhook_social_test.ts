import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkTokenExpiry } from "@site/domain/social";
import { startWebhookDispatcher, type WebhookDispatcher } from "@site/domain/webhooks";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount } from "../../testing/social.ts";
import { startWebhookReceiver, verifyHook, type WebhookReceiver } from "../../testing/webhook_receiver.ts";

// social.post.published, social.post.failed and social.account.reconnect_required, fired by real
// publications to the strict fake platforms and by the collector's token check; verified with
// standardwebhooks (decisions 0840, 0843).
let h: TestApp;
let fake: FakePlatforms;
let rx: WebhookReceiver;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  fake = startFakePlatforms();
  rx = startWebhookReceiver();
  h = await buildTestApp({
    env: { ...fake.env, ...fake.oauthEnv, FETCH_ALLOW_HOSTS: rx.host, WEBHOOK_SWEEP_EVERY_MS: "100" },
  });
  dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
});
afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
  rx?.stop();
  fake?.close();
});

type Json = Record<string, any>;
type Payload = { type: string; timestamp: string; data: Json };

/** An organization with one endpoint at `path` subscribed to `events`. */
async function orgWithHook(path: string, events: string[]) {
  const o = await h.seedOrg({ scopes: ["webhooks:write", "social:write"] });
  const res = await h.call("POST", "/api/v1/webhooks", { key: o.key, body: { url: rx.url(path), events } });
  expect(res.status).toBe(201);
  const { secret } = (await res.json()) as { secret: string };
  return { ...o, secret };
}

async function publish(key: string, accounts: string[]) {
  const res = await h.call("POST", "/api/v1/social/posts", {
    key,
    body: { content: "Launch day", accounts },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { post: Json }).post;
}

/** The hooks `path` got, verified with the endpoint's secret, by event type. */
async function received(path: string, secret: string, n: number): Promise<Record<string, Payload>> {
  const hooks = await rx.waitFor(path, n, 20_000);
  const out: Record<string, Payload> = {};
  for (const hook of hooks) {
    const p = verifyHook(secret, hook) as Payload;
    out[p.type] = p;
  }
  return out;
}

/** Gives a dispatcher time to send what it would (an event that should not come). */
async function settled(o: { org: { id: string } }) {
  for (let i = 0; i < 200; i++) {
    const [r] = await h.sql`select count(*)::int as n from webhook_deliveries
      where org_id = ${o.org.id} and status = 'pending'`;
    if (r!.n === 0) return;
    await Bun.sleep(50);
  }
  throw new Error("deliveries still pending");
}

/** The post as GET /api/v1/social/posts/<id> answers it (the `post` of its answer). */
const getPost = async (key: string, id: string) =>
  ((await (await h.call("GET", `/api/v1/social/posts/${id}`, { key })).json()) as { post: Json }).post;
const listAccounts = async (key: string) =>
  ((await (await h.call("GET", "/api/v1/social/accounts", { key })).json()) as { accounts: Json[] }).accounts;

describe("social post events", () => {
  /** The post of an event's data, as GET answers it, without the `target` the event adds. */
  const postOf = (p: Payload) => {
    const { target: _target, ...post } = p.data;
    return post;
  };

  test("social.post.published per target as it ends, each naming its target; no failed event when all went out", async () => {
    const o = await orgWithHook("/post-ok", ["social.post.published", "social.post.failed"]);
    const reddit = await connectSocialAccount(h, o.key, "reddit");
    const x = await connectSocialAccount(h, o.key, "x", { tier: "basic" });
    const post = await publish(o.key, [reddit.id, x.id]);
    const hooks = (await rx.waitFor("/post-ok", 2, 20_000)).map((hk) => verifyHook(o.secret, hk) as Payload);
    expect(hooks.map((p) => p.type)).toEqual(["social.post.published", "social.post.published"]);
    expect(hooks.map((p) => p.data.target.accountId).sort()).toEqual([reddit.id, x.id].sort());
    for (const p of hooks) expect(p.data.target).toMatchObject({ status: "published", error: null });
    // The last target to end carries the post as GET answers it once both went out.
    const last = hooks.find((p) => p.data.targets.every((t: Json) => t.status === "published"))!;
    expect(postOf(last)).toEqual(await getPost(o.key, post.postId));
    await settled(o);
    expect(rx.to("/post-ok")).toHaveLength(2);
  });

  test("a partial failure sends social.post.published and social.post.failed, each naming its target", async () => {
    const o = await orgWithHook("/post-partial", ["social.post.published", "social.post.failed"]);
    const reddit = await connectSocialAccount(h, o.key, "reddit");
    const token = `tok-revoked-${crypto.randomUUID()}`;
    const linkedin = await connectSocialAccount(h, o.key, "linkedin", { accessToken: token });
    fake.expire(token);
    const post = await publish(o.key, [reddit.id, linkedin.id]);
    const got = await received("/post-partial", o.secret, 2);
    expect(Object.keys(got).sort()).toEqual(["social.post.failed", "social.post.published"]);
    expect(got["social.post.failed"]!.data.target.accountId).toBe(linkedin.id);
    expect(got["social.post.published"]!.data.target.accountId).toBe(reddit.id);
    const read = await getPost(o.key, post.postId);
    expect(postOf(got["social.post.failed"]!).postId).toBe(read.postId);
    const failed = read.targets.find((t: Json) => t.accountId === linkedin.id);
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed.error).toBeString();
    expect(failed.error.length).toBeGreaterThan(0);
    expect(got["social.post.failed"]!.data.target.error).toBe(failed.error);
  });

  test("every target failing sends social.post.failed only; an endpoint of another event gets nothing", async () => {
    const o = await orgWithHook("/post-failed", ["social.post.failed"]);
    const other = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: rx.url("/post-failed-other"), events: ["social.post.published"] },
    });
    expect(other.status).toBe(201);
    const token = `tok-revoked-${crypto.randomUUID()}`;
    const linkedin = await connectSocialAccount(h, o.key, "linkedin", { accessToken: token });
    fake.expire(token);
    const post = await publish(o.key, [linkedin.id]);
    const got = await received("/post-failed", o.secret, 1);
    expect(postOf(got["social.post.failed"]!)).toEqual(await getPost(o.key, post.postId));
    expect(got["social.post.failed"]!.data.publishedAt).toBeNull();
    await settled(o);
    expect(rx.to("/post-failed-other")).toHaveLength(0);
    expect(rx.to("/post-failed")).toHaveLength(1);
  });
});

describe("social.account.reconnect_required", () => {
  test("a renewal the platform refuses at publish: the account as listed, with status reconnect_required", async () => {
    const o = await orgWithHook("/reconnect", ["social.account.reconnect_required", "social.post.failed"]);
    const reddit = await connectSocialAccount(h, o.key, "reddit", {
      refreshToken: "rt-never-issued",
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const post = await publish(o.key, [reddit.id]);
    expect(post.targets[0]).toMatchObject({ status: "failed" });
    const got = await received("/reconnect", o.secret, 2);
    const account = got["social.account.reconnect_required"]!.data;
    expect(account).toMatchObject({ id: reddit.id, platform: "reddit", status: "reconnect_required" });
    expect(account).toEqual((await listAccounts(o.key)).find((a) => a.id === reddit.id)!);
    expect(got["social.post.failed"]!.data.postId).toBe(post.postId);
    // Marked already: a second publish fails at once and announces nothing new about the account.
    await publish(o.key, [reddit.id]);
    await received("/reconnect", o.secret, 3);
    await settled(o);
    expect(
      rx.to("/reconnect").filter((r) => r.json.type === "social.account.reconnect_required"),
    ).toHaveLength(1);
  });

  test("a token that expired with no refresh token, found by the collector's check", async () => {
    const o = await orgWithHook("/expired", ["social.account.reconnect_required"]);
    const linkedin = await connectSocialAccount(h, o.key, "linkedin", {
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const fresh = await connectSocialAccount(h, o.key, "x", {
      tier: "basic",
      expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    const report = await checkTokenExpiry(h.ctx, new Date());
    expect(report.expired).toBeGreaterThanOrEqual(1);
    const got = await received("/expired", o.secret, 1);
    const account = got["social.account.reconnect_required"]!.data;
    expect(account).toEqual((await listAccounts(o.key)).find((a) => a.id === linkedin.id)!);
    expect(account.status).toBe("reconnect_required");
    // A second pass finds nothing new: no second event; the fresh account was never announced.
    await checkTokenExpiry(h.ctx, new Date());
    await settled(o);
    expect(rx.to("/expired").map((r) => (r.json.data as Json).id)).toEqual([linkedin.id]);
    expect((await listAccounts(o.key)).find((a) => a.id === fresh.id)!.status).toBe("connected");
  });
});
