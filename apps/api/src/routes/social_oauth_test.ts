import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decryptSecret } from "@site/domain/core";
import { connectCookieValue, connectSetCookie, readyAccount, startConnect } from "@site/domain/social";
import { createOAuthPort, createPlatformAdapters } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

// Connecting accounts with OAuth, end to end against the fake platforms' authorization servers:
// connect → the user's consent (the fake redirects at once) → callback in the browser that started it
// (its sca_connect cookie: the contract's answer) or in another browser (the starting user's
// confirmation, decisions 1016 and 1030) → stored tokens → refresh.

let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({
    env: { ...fake.env, ...fake.oauthEnv, SOCIAL_REDIRECT_ORIGINS: "https://app.example" },
  });
});
afterAll(async () => {
  fake.close();
  await h.close();
});

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;
const PLATFORMS = ["instagram", "threads", "x", "linkedin", "reddit", "tiktok"] as const;

async function connect(key: string, platform: string, redirectUri?: string) {
  const res = await h.call("POST", "/api/v1/social/accounts/connect", {
    key,
    body: { platform, redirectUri },
  });
  expect(res.status).toBe(201);
  // What the starting browser keeps: the cookie's name=value (its attributes are checked below).
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { ...((await body(res)) as { authorizeUrl: string; state: string }), cookie };
}
/** The user consents at the platform: its authorization server redirects to our callback. */
async function consent(authorizeUrl: string): Promise<string> {
  const res = await fetch(authorizeUrl, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}
/** The platform's redirect lands in a browser: `cookie` is what that browser sends (none: another browser). */
const callback = (url: string, cookie?: string) => {
  const u = new URL(url);
  return h.app.handle(
    new Request(`http://localhost${u.pathname}${u.search}`, { headers: cookie ? { cookie } : {} }),
  );
};
/** The starting user confirms what the callback handed to the browser. */
const confirm = (key: string, state: string, token: string) =>
  h.call("POST", "/api/v1/social/accounts/connect/confirm", { key, body: { state, confirm: token } });
/** connect → consent → callback in the same browser (its cookie): the stored account, as the contract answers. */
async function complete(key: string, platform: string): Promise<Json> {
  const started = await connect(key, platform);
  const back = await callback(await consent(started.authorizeUrl), started.cookie);
  expect(back.status).toBe(200);
  return (await body(back)).account;
}

describe("auth rules", () => {
  test("POST /api/v1/social/accounts/connect: 401 without or with a bad key, 403 without social:write", async () => {
    await expectAuthRules(h, {
      method: "POST",
      path: "/api/v1/social/accounts/connect",
      body: { platform: "x" },
      scope: "social:write",
    });
  });
});

describe("connect → callback → stored tokens", () => {
  test.each(PLATFORMS)(
    "%s: in the browser that started it, the callback answers 200 {account} (contract): the code exchanged, the tokens stored encrypted with their expiry",
    async (platform) => {
      const { key, org } = await h.seedOrg();
      const { authorizeUrl, state, cookie } = await connect(key, platform);
      expect(cookie).toStartWith("sca_connect=");
      const a = new URL(authorizeUrl);
      expect(a.searchParams.get("state")).toBe(state);
      expect(a.searchParams.get("redirect_uri")).toBe(
        `${h.ctx.config.publicBaseUrl}/api/v1/social/oauth/${platform}/callback`,
      );
      if (platform === "x" || platform === "tiktok")
        expect(a.searchParams.get("code_challenge_method")).toBe("S256");
      if (platform === "x") expect(a.searchParams.get("scope")).toContain("offline.access");
      if (platform === "reddit") expect(a.searchParams.get("duration")).toBe("permanent");
      const res = await callback(await consent(authorizeUrl), cookie);
      expect(res.status).toBe(200);
      expect(res.headers.get("set-cookie")).toContain("sca_connect=;");
      const { account } = await body(res);
      expect(account).toMatchObject({ platform, status: "connected" });
      const [st] =
        await h.sql`select pending_ciphertext, confirmed_at from social_oauth_states where state = ${state}`;
      expect(st!.pending_ciphertext).toBeNull();
      expect(st!.confirmed_at).not.toBeNull();
      expect(Date.parse(account.expiresAt)).toBeGreaterThan(Date.now());
      const [row] =
        await h.sql`select org_id, token_ciphertext, refresh_token_ciphertext from social_accounts where id = ${account.id}`;
      expect(row!.org_id).toBe(org.id);
      expect(decryptSecret(h.ctx.config.secretKey, row!.token_ciphertext)).toStartWith(`at-${platform}-`);
      // Meta's long-lived tokens refresh themselves; LinkedIn gives refresh tokens to partners only; the
      // others come with a refresh token.
      if (platform === "instagram" || platform === "threads" || platform === "linkedin")
        expect(row!.refresh_token_ciphertext).toBeNull();
      else
        expect(decryptSecret(h.ctx.config.secretKey, row!.refresh_token_ciphertext)).toStartWith(
          `rt-${platform}-`,
        );
      const list = await body(await h.call("GET", "/api/v1/social/accounts", { key }));
      expect(list.accounts.map((x: Json) => x.id)).toEqual([account.id]);
    },
  );

  test("then refresh: an expired X token is renewed (the refresh token rotates: the old one is refused after)", async () => {
    const { key } = await h.seedOrg();
    const account = await complete(key, "x");
    const [before] =
      await h.sql`select token_ciphertext, refresh_token_ciphertext from social_accounts where id = ${account.id}`;
    const oldRefresh = decryptSecret(h.ctx.config.secretKey, before!.refresh_token_ciphertext);
    const later = new Date(Date.now() + 3 * 3_600_000);
    fake.setNow(later);
    try {
      const ready = await readyAccount(h.ctx, account.id, createPlatformAdapters(h.ctx), later);
      expect(ready.accessToken).not.toBe(decryptSecret(h.ctx.config.secretKey, before!.token_ciphertext));
      const reused = await fetch(`${fake.oauthEnv.SOCIAL_AUTH_BASE_X}/2/oauth2/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from("client-x:secret-x").toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: oldRefresh }),
      });
      expect(reused.status).toBe(400);
      expect(((await reused.json()) as Json).error).toBe("invalid_grant");
    } finally {
      fake.setNow(new Date());
    }
  });

  test("the connect answer's cookie: HttpOnly, callback path only, 10 minutes, an HMAC of the state (SameSite=Lax over http, None; Secure over https)", async () => {
    const { key } = await h.seedOrg();
    const res = await h.call("POST", "/api/v1/social/accounts/connect", { key, body: { platform: "x" } });
    const { state } = await body(res);
    const c = res.headers.get("set-cookie")!;
    expect(c).toBe(
      `sca_connect=${connectCookieValue(h.ctx.config.secretKey, state)}; Path=/api/v1/social/oauth; HttpOnly; Max-Age=600; SameSite=Lax`,
    );
    expect(c).not.toContain(state);
    expect(connectSetCookie({ secretKey: "k", publicBaseUrl: "https://api.example" }, "s")).toEndWith(
      "; HttpOnly; Max-Age=600; SameSite=None; Secure",
    );
  });

  test("with a redirectUri, in the browser that started it: 302 there with ?account=<id> (contract)", async () => {
    const { key } = await h.seedOrg();
    const started = await connect(key, "x", "https://app.example/after?tab=social");
    const back = await callback(await consent(started.authorizeUrl), started.cookie);
    expect(back.status).toBe(302);
    const to = new URL(back.headers.get("location")!);
    expect(`${to.origin}${to.pathname}`).toBe("https://app.example/after");
    expect(to.searchParams.get("tab")).toBe("social");
    expect(to.searchParams.get("confirm")).toBeNull();
    const id = to.searchParams.get("account");
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts[0].id).toBe(id);
  });

  test("a cookie of another state (the browser started another connect) is not this browser's: confirmation step", async () => {
    const { key } = await h.seedOrg();
    const mine = await connect(key, "linkedin");
    const other = await connect(key, "linkedin");
    const back = await callback(await consent(mine.authorizeUrl), other.cookie);
    expect(back.status).toBe(200);
    expect((await body(back)).pending.state).toBe(mine.state);
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts).toEqual([]);
  });

  test("with a redirectUri, in another browser: 302 there with ?state=&confirm=, confirmed by the user; a refused code: ?error=invalid_grant", async () => {
    const { key } = await h.seedOrg();
    const first = await connect(key, "reddit", "https://app.example/after?tab=social");
    const firstLocation = await consent(first.authorizeUrl);
    const back = await callback(firstLocation);
    expect(back.status).toBe(302);
    expect(back.headers.get("referrer-policy")).toBe("no-referrer");
    const to = new URL(back.headers.get("location")!);
    expect(`${to.origin}${to.pathname}`).toBe("https://app.example/after");
    expect(to.searchParams.get("tab")).toBe("social");
    expect(to.searchParams.get("state")).toBe(first.state);
    const done = await confirm(key, first.state, to.searchParams.get("confirm")!);
    expect(done.status).toBe(201);
    const id = (await body(done)).account.id;
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts[0].id).toBe(id);
    // A confirmation is good once.
    expect((await confirm(key, first.state, to.searchParams.get("confirm")!)).status).toBe(400);
    // The code, already exchanged once, replayed under a fresh state of ours: the platform refuses it.
    const code = new URL(firstLocation).searchParams.get("code");
    const second = await connect(key, "reddit", "https://app.example/after");
    const replayed = await callback(
      `http://localhost/api/v1/social/oauth/reddit/callback?code=${code}&state=${second.state}`,
    );
    expect(replayed.status).toBe(302);
    expect(new URL(replayed.headers.get("location")!).searchParams.get("error")).toBe("invalid_grant");
  });
});

describe("refused callbacks", () => {
  test("a state never issued, for another platform, expired or used twice: 400 VALIDATION_ERROR, nothing stored", async () => {
    const { key } = await h.seedOrg();
    const { authorizeUrl, state } = await connect(key, "linkedin");
    const location = await consent(authorizeUrl);
    const code = new URL(location).searchParams.get("code");
    const cases = [
      `/api/v1/social/oauth/linkedin/callback?code=${code}&state=forged`,
      `/api/v1/social/oauth/linkedin/callback?code=${code}`,
      `/api/v1/social/oauth/x/callback?code=${code}&state=${state}`,
    ];
    for (const path of cases) {
      const res = await h.app.handle(new Request(`http://localhost${path}`));
      expect(res.status).toBe(400);
      expect((await body(res)).error.code).toBe("VALIDATION_ERROR");
    }
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts).toEqual([]);
    const granted = await callback(location);
    expect(granted.status).toBe(200);
    const { pending } = await body(granted);
    expect((await confirm(key, pending.state, "not-the-token")).status).toBe(400);
    expect((await confirm(key, pending.state, pending.confirm)).status).toBe(201);
    // The same callback again: its state is spent.
    const again = await callback(location);
    expect(again.status).toBe(400);
    // Expired states are refused too.
    const late = await connect(key, "linkedin");
    await h.sql`update social_oauth_states set expires_at = now() - interval '1 second' where state = ${late.state}`;
    expect((await callback(await consent(late.authorizeUrl))).status).toBe(400);
    expect(
      (await h.app.handle(new Request("http://localhost/api/v1/social/oauth/myspace/callback?state=x")))
        .status,
    ).toBe(404);
  });

  test("the platform's denial (?error=access_denied) and a bad redirectUri", async () => {
    const { key } = await h.seedOrg();
    const { state } = await connect(key, "tiktok", "https://app.example/done");
    const denied = await callback(
      `http://localhost/api/v1/social/oauth/tiktok/callback?error=access_denied&state=${state}`,
    );
    expect(denied.status).toBe(302);
    expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
    for (const redirectUri of ["javascript:alert(1)", "not a url"]) {
      const res = await h.call("POST", "/api/v1/social/accounts/connect", {
        key,
        body: { platform: "x", redirectUri },
      });
      expect(res.status).toBe(400);
    }
    expect(
      (await h.call("POST", "/api/v1/social/accounts/connect", { key, body: { platform: "myspace" } }))
        .status,
    ).toBe(400);
  });

  test("a platform without a configured client: 501 NOT_CONFIGURED", async () => {
    const { org } = await h.seedOrg();
    const config = { ...h.ctx.config, social: { ...h.ctx.config.social, clients: {} } };
    const err = await startConnect(
      h.ctx,
      { keyId: "k", orgId: org.id, userId: "u", scopes: ["social:write"], role: "owner" },
      { platform: "x" },
      createOAuthPort(config),
    ).catch((e) => e);
    expect(err.code).toBe("NOT_CONFIGURED");
  });
});
