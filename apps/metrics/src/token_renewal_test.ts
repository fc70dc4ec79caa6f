import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Logger, loadConfig } from "@site/config";
import type { DbHandle } from "@site/db";
import { createOrganization, decryptSecret, type Principal } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import {
  checkTokenExpiry,
  connectSocialAccount,
  needsRenewal,
  PlatformError,
  REFRESH_MARGIN_MS,
  readyAccount,
  SOCIAL_PLATFORMS,
  type SocialPlatform,
} from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";
import type { FakePlatforms } from "@site/social/testing";
import { type MetricsTestbed, startMetricsTestbed } from "../testing/mod.ts";

// The rules of libs/domain/social/tokens.ts one by one (docs/mutation/tokens.md): the 5-minute margin to
// the minute, the row lock's two outcomes for the process that waited (renewed meanwhile, refused
// meanwhile), what a transient failure keeps, the exact errors the publish path shows, and which of
// the six platforms cannot renew without a refresh token.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let bed: MetricsTestbed;
let ctx: MediaContext;
let fake: FakePlatforms;
let handle: DbHandle;
beforeAll(async () => {
  bed = await startMetricsTestbed();
  ({ ctx, fake, handle } = bed);
});
afterAll(() => bed.close());

async function seedOrg(): Promise<Principal> {
  const org = await createOrganization(ctx, { name: `Org ${Math.random().toString(36).slice(2, 7)}` });
  return { keyId: "k", orgId: org.id, userId: "u", scopes: ["social:write"], role: "owner" };
}

/** An account holding tokens the fake platform issued, stored as expiring at `expiresAt` (null: never). */
async function connect(
  p: Principal,
  platform: SocialPlatform,
  o: { expiresAt: Date | null; refreshToken?: string | null },
) {
  const t = fake.issueTokens(platform);
  const refreshToken = o.refreshToken === undefined ? t.refreshToken : o.refreshToken;
  const { account } = await connectSocialAccount(ctx, p, {
    platform,
    accountId: t.user,
    accessToken: t.accessToken,
    refreshToken: refreshToken ?? undefined,
    expiresAt: o.expiresAt?.toISOString(),
  });
  return { id: account.id, token: t.accessToken };
}

async function stored(id: string) {
  const [row] = await handle.sql<
    {
      status: string;
      token_ciphertext: string;
      refresh_token_ciphertext: string | null;
      token_expires_at: Date | null;
      expiry_warned_at: Date | null;
    }[]
  >`select status, token_ciphertext, refresh_token_ciphertext, token_expires_at, expiry_warned_at
    from social_accounts where id = ${id}`;
  return {
    status: row!.status,
    token: decryptSecret(ctx.config.secretKey, row!.token_ciphertext),
    refreshToken: row!.refresh_token_ciphertext
      ? decryptSecret(ctx.config.secretKey, row!.refresh_token_ciphertext)
      : null,
    expiresAt: row!.token_expires_at ? new Date(row!.token_expires_at).getTime() : null,
    warnedAt: row!.expiry_warned_at ? new Date(row!.expiry_warned_at).getTime() : null,
  };
}

/** A PlatformError as the caller sees it: its kind and message. */
function refusalOf(err: unknown): { kind: string; message: string } {
  if (!(err instanceof PlatformError)) throw err;
  return { kind: err.kind, message: err.message };
}

/** What readyAccount threw (it must throw). */
async function refusal(p: Promise<unknown>): Promise<{ kind: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return refusalOf(err);
  }
  throw new Error("readyAccount answered where it had to throw");
}

/** A promise, and whether it has settled yet. */
function watch<T>(p: Promise<T>): { p: Promise<T>; done: boolean } {
  const w = { p, done: false };
  p.then(
    () => {
      w.done = true;
    },
    () => {
      w.done = true;
    },
  );
  return w;
}

/** True while a session of the test database waits for a lock (readyAccount on the account row's). */
async function waitsForRowLock(): Promise<boolean> {
  const [r] = await handle.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`;
  return (r?.n ?? 0) > 0;
}

/**
 * Waits for `cond` (each step it waits for takes milliseconds); 10 s at most, so that a mutant which
 * never gets there fails the test well within StrykerJS's timeout.
 */
async function until(what: string, cond: () => boolean | Promise<boolean>) {
  const end = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await Bun.sleep(10);
  }
}

/** A logger keeping its warnings. */
function capture(): { log: Logger; warnings: { msg: string; fields?: Record<string, unknown> }[] } {
  const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
  const log: Logger = {
    debug() {},
    info() {},
    error() {},
    warn(msg, fields) {
      warnings.push({ msg, fields });
    },
    child: () => log,
  };
  return { log, warnings };
}

describe("the refresh margin", () => {
  test("5 minutes to the millisecond: a token expiring exactly at the margin needs renewal, 1 ms later it does not; no expiry never does", () => {
    const now = new Date("2027-03-01T12:00:00Z");
    const at = (ms: number) => ({ tokenExpiresAt: new Date(now.getTime() + ms) });
    expect(REFRESH_MARGIN_MS).toBe(5 * MINUTE);
    expect(needsRenewal(at(5 * MINUTE), now)).toBe(true);
    expect(needsRenewal(at(5 * MINUTE + 1), now)).toBe(false);
    expect(needsRenewal(at(-HOUR), now)).toBe(true);
    expect(needsRenewal({ tokenExpiresAt: null }, now)).toBe(false);
  });

  test("readyAccount renews a token expiring in exactly 5 minutes, and uses one expiring 1 ms later as it is", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const adapters = createPlatformAdapters(ctx);
    const edge = await connect(p, "x", { expiresAt: new Date(now.getTime() + 5 * MINUTE) });
    const later = await connect(p, "x", { expiresAt: new Date(now.getTime() + 5 * MINUTE + 1) });
    const before = fake.refreshCount("x");
    const renewed = await readyAccount(ctx, edge.id, adapters, now);
    expect(fake.refreshCount("x") - before).toBe(1);
    expect(renewed.accessToken).not.toBe(edge.token);
    // The new token is what is stored, with the platform's 2-hour lifetime counted from `now`.
    expect(await stored(edge.id)).toMatchObject({
      token: renewed.accessToken,
      expiresAt: now.getTime() + 2 * HOUR,
    });
    const kept = await readyAccount(ctx, later.id, adapters, now);
    expect(kept.accessToken).toBe(later.token);
    expect(fake.refreshCount("x") - before).toBe(1);
  });

  test("a token without expiry is used as it is, and a platform without an OAuth client (or adapter) never renews", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const adapters = createPlatformAdapters(ctx);
    const forever = await connect(p, "linkedin", { expiresAt: null, refreshToken: null });
    expect((await readyAccount(ctx, forever.id, adapters, now)).accessToken).toBe(forever.token);
    // No SOCIAL_X_CLIENT_ID: X's adapter has no `renew`; the expired token goes to the platform as it is
    // (which answers auth there: the account is not marked here).
    const config = loadConfig({
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      ...fake.env,
    });
    const noClient = createPlatformAdapters({ ...ctx, config });
    expect(noClient.x?.renew).toBeUndefined();
    const expired = await connect(p, "x", { expiresAt: new Date(now.getTime() - HOUR) });
    const before = fake.refreshCount("x");
    const used = await readyAccount(ctx, expired.id, noClient, now);
    expect({ token: used.accessToken, id: used.id }).toEqual({ token: expired.token, id: expired.id });
    // No adapter at all for the platform (PlatformAdapters is partial): the same.
    expect((await readyAccount(ctx, expired.id, {}, now)).accessToken).toBe(expired.token);
    expect(fake.refreshCount("x")).toBe(before);
    expect((await stored(expired.id)).status).toBe("connected");
  });
});

describe("what a renewal stores", () => {
  test("X's rotating refresh token: the new one is stored, so the next renewal works; Threads renews its own token and stores no refresh token", async () => {
    const p = await seedOrg();
    const t0 = new Date();
    // Threads renews a long-lived token at least 24 hours old: this one was issued two days ago.
    fake.setNow(new Date(t0.getTime() - 2 * DAY));
    const threads = await connect(p, "threads", { expiresAt: new Date(t0.getTime() + MINUTE) });
    fake.setNow(t0);
    const x = await connect(p, "x", { expiresAt: new Date(t0.getTime() - MINUTE) });
    const adapters = createPlatformAdapters(ctx);
    const th = await readyAccount(ctx, threads.id, adapters, t0);
    expect(th.accessToken).not.toBe(threads.token);
    expect(await stored(threads.id)).toMatchObject({
      token: th.accessToken,
      refreshToken: null,
      expiresAt: t0.getTime() + 60 * DAY,
    });
    const spent = (await stored(x.id)).refreshToken;
    const first = await readyAccount(ctx, x.id, adapters, t0);
    const rotated = (await stored(x.id)).refreshToken;
    expect(rotated).not.toBeNull();
    expect(rotated).not.toBe(spent);
    const t1 = new Date(t0.getTime() + 3 * HOUR);
    fake.setNow(t1);
    const second = await readyAccount(ctx, x.id, adapters, t1);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(await stored(x.id)).toMatchObject({
      status: "connected",
      token: second.accessToken,
      expiresAt: t1.getTime() + 2 * HOUR,
    });
  });
});

describe("accounts that cannot be used", () => {
  test("an account that no longer exists, and one marked reconnect_required: auth errors with their wording, the platform never asked", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const adapters = createPlatformAdapters(ctx);
    expect(await refusal(readyAccount(ctx, crypto.randomUUID(), adapters, now))).toEqual({
      kind: "auth",
      message: "the account is no longer connected",
    });
    const marked = await connect(p, "reddit", { expiresAt: new Date(now.getTime() - HOUR) });
    await handle.sql`update social_accounts set status = 'reconnect_required' where id = ${marked.id}`;
    const before = fake.refreshCount("reddit");
    expect(await refusal(readyAccount(ctx, marked.id, adapters, now))).toEqual({
      kind: "auth",
      message: "reddit: the account must be reconnected (its token was refused)",
    });
    expect(fake.refreshCount("reddit")).toBe(before);
  });

  test("a refused refresh: reconnect_required, the token kept, the platform's reason in the error and in the operator's warning", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const x = await connect(p, "x", {
      expiresAt: new Date(now.getTime() + MINUTE),
      refreshToken: "rt-never-issued",
    });
    // Another account of the organization, on the same platform: only the refused one is marked.
    const other = await connect(p, "x", { expiresAt: new Date(now.getTime() + HOUR) });
    const c = capture();
    const err = await refusal(readyAccount({ ...ctx, log: c.log }, x.id, createPlatformAdapters(ctx), now));
    expect(err).toEqual({
      kind: "auth",
      message:
        "x: the platform refused to renew the token; reconnect the account (x: the token refresh was refused (invalid_grant: the refresh token is invalid or was already used))",
    });
    expect(await stored(x.id)).toMatchObject({ status: "reconnect_required", token: x.token });
    expect((await stored(other.id)).status).toBe("connected");
    expect(c.warnings).toEqual([
      { msg: "social token refresh refused", fields: { platform: "x", accountId: x.id } },
    ]);
  });
});

describe("a platform that cannot answer (transient)", () => {
  // The token endpoint unreachable (nothing listens on port 1): renewToken fails `transient`.
  const unreachable = () =>
    createPlatformAdapters({
      ...ctx,
      config: loadConfig({
        SECRET_KEY: "test-secret-key-0123456789",
        DATA_DIR: "/tmp/site-test-data",
        ...fake.env,
        ...fake.oauthEnv,
        SOCIAL_AUTH_BASE_X: "http://127.0.0.1:1/auth/x",
      }),
    });

  test("a token that has not expired yet is used; one expired, or expiring this very instant, fails transient; the account stays connected", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const adapters = unreachable();
    const valid = await connect(p, "x", { expiresAt: new Date(now.getTime() + 2 * MINUTE) });
    const edge = await connect(p, "x", { expiresAt: now });
    const expired = await connect(p, "x", { expiresAt: new Date(now.getTime() - MINUTE) });
    expect((await readyAccount(ctx, valid.id, adapters, now)).accessToken).toBe(valid.token);
    for (const a of [edge, expired]) {
      const err = await refusal(readyAccount(ctx, a.id, adapters, now));
      expect(err.kind).toBe("transient");
      expect(err.message).toContain("platform unreachable");
      expect(await stored(a.id)).toMatchObject({ status: "connected", token: a.token });
    }
    expect((await stored(valid.id)).status).toBe("connected");
  });
});

describe("an adapter failing with something other than a PlatformError", () => {
  test("is a transient failure with the error's text: a still valid token is used, an expired one fails transient, the account stays connected", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const adapters = createPlatformAdapters(ctx);
    // The real adapter with its renewal failing the way a bug or an unexpected answer would.
    const broken = {
      ...adapters,
      x: {
        ...adapters.x!,
        renew: async () => {
          throw new TypeError("unexpected token answer");
        },
      },
    };
    const valid = await connect(p, "x", { expiresAt: new Date(now.getTime() + MINUTE) });
    const expired = await connect(p, "x", { expiresAt: new Date(now.getTime() - MINUTE) });
    expect((await readyAccount(ctx, valid.id, broken, now)).accessToken).toBe(valid.token);
    expect(await refusal(readyAccount(ctx, expired.id, broken, now))).toEqual({
      kind: "transient",
      message: "TypeError: unexpected token answer",
    });
    expect(await stored(expired.id)).toMatchObject({ status: "connected", token: expired.token });
  });
});

/**
 * readyAccount twice on one account, the second certain to come while the first holds the row's lock:
 * the platform holds the first's refresh answer until the second waits for the lock (or, without the
 * lock, asks too). Refreshes after that are held apart and counted: `asked` is what the second sent.
 */
async function twoAtOnce(id: string, now: Date) {
  const call = () =>
    watch(
      readyAccount(ctx, id, createPlatformAdapters(ctx), now).then(
        (account) => ({ token: account.accessToken }),
        (err: unknown) => ({ refused: refusalOf(err) }),
      ),
    );
  const first = fake.holdRefresh();
  const a = call();
  let b: ReturnType<typeof call> | undefined;
  let second: ReturnType<typeof fake.holdRefresh> | undefined;
  try {
    await until("the first asks the platform", () => first.arrived === 1 || a.done);
    if (first.arrived === 0)
      throw new Error(`the first never asked the platform: ${JSON.stringify(await a.p)}`);
    const waiting = call();
    b = waiting;
    await until(
      "the second waits for the row lock",
      async () => first.arrived === 2 || waiting.done || (await waitsForRowLock()),
    );
    second = fake.holdRefresh();
  } finally {
    first.release();
  }
  const ra = await a.p;
  await until("the second answers or asks the platform", () => b.done || second.arrived > 0);
  second.release();
  return { first: ra, second: await b.p, asked: first.arrived - 1 + second.arrived };
}

describe("two processes on one account (the row lock)", () => {
  test("the second waits for the first's renewal and uses its token: the platform is asked once", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const x = await connect(p, "x", { expiresAt: new Date(now.getTime() - MINUTE) });
    const before = fake.refreshCount("x");
    const r = await twoAtOnce(x.id, now);
    expect({ asked: r.asked, granted: fake.refreshCount("x") - before }).toEqual({ asked: 0, granted: 1 });
    const renewed = (await stored(x.id)).token;
    expect(renewed).not.toBe(x.token);
    expect(r).toMatchObject({ first: { token: renewed }, second: { token: renewed } });
  });

  test("the first's refresh is refused: the second, once it holds the lock, finds the account to reconnect and asks nothing", async () => {
    const p = await seedOrg();
    const now = new Date();
    fake.setNow(now);
    const x = await connect(p, "x", {
      expiresAt: new Date(now.getTime() - MINUTE),
      refreshToken: "rt-refused",
    });
    const r = await twoAtOnce(x.id, now);
    expect(r.asked).toBe(0);
    expect(r.first).toEqual({
      refused: {
        kind: "auth",
        message:
          "x: the platform refused to renew the token; reconnect the account (x: the token refresh was refused (invalid_grant: the refresh token is invalid or was already used))",
      },
    });
    // The second's error gives no platform reason: it asked nothing, it found the row marked.
    expect(r.second).toEqual({
      refused: { kind: "auth", message: "x: the platform refused to renew the token; reconnect the account" },
    });
    expect(await stored(x.id)).toMatchObject({ status: "reconnect_required", token: x.token });
  });
});

describe("tokens that cannot be renewed (checkTokenExpiry)", () => {
  test("of the six platforms, X, Reddit, LinkedIn and TikTok need a refresh token: expired at `now` exactly → reconnect_required; expiring by 7 days exactly → warned once", async () => {
    const p = await seedOrg();
    const now = new Date(Date.now() + 2000 * DAY);
    const soon = new Date(now.getTime() + 7 * DAY);
    // Whatever earlier tests left due at `now` is dealt with first, so the counts below are this test's.
    await checkTokenExpiry(ctx, now);
    const rows: Record<
      string,
      { platform: SocialPlatform; expired: string; warned: string; beyond: string; renewable: string }
    > = {};
    for (const platform of SOCIAL_PLATFORMS) {
      rows[platform] = {
        platform,
        expired: (await connect(p, platform, { expiresAt: now, refreshToken: null })).id,
        warned: (await connect(p, platform, { expiresAt: soon, refreshToken: null })).id,
        beyond: (await connect(p, platform, { expiresAt: new Date(soon.getTime() + 1), refreshToken: null }))
          .id,
        renewable: (
          await connect(p, platform, { expiresAt: new Date(now.getTime() - DAY), refreshToken: "rt-kept" })
        ).id,
      };
    }
    const c = capture();
    expect(await checkTokenExpiry({ ...ctx, log: c.log }, now)).toEqual({ warned: 4, expired: 4 });
    const needs = ["x", "reddit", "linkedin", "tiktok"];
    expect([...SOCIAL_PLATFORMS].sort()).toEqual([
      "instagram",
      "linkedin",
      "reddit",
      "threads",
      "tiktok",
      "x",
    ]);
    for (const r of Object.values(rows)) {
      const needed = needs.includes(r.platform);
      expect({ platform: r.platform, status: (await stored(r.expired)).status }).toEqual({
        platform: r.platform,
        status: needed ? "reconnect_required" : "connected",
      });
      expect({ platform: r.platform, warnedAt: (await stored(r.warned)).warnedAt }).toEqual({
        platform: r.platform,
        warnedAt: needed ? now.getTime() : null,
      });
      expect(await stored(r.beyond)).toMatchObject({ status: "connected", warnedAt: null });
      expect(await stored(r.renewable)).toMatchObject({ status: "connected", warnedAt: null });
    }
    const byPlatform = (a?: Record<string, unknown>, b?: Record<string, unknown>) =>
      String(a?.platform).localeCompare(String(b?.platform));
    const marked = c.warnings.filter((w) => w.msg.includes("must be reconnected"));
    expect(marked.map((w) => w.fields).sort(byPlatform)).toEqual(
      ["linkedin", "reddit", "tiktok", "x"].map((platform) => ({
        accountId: rows[platform]!.expired,
        orgId: p.orgId,
        platform,
      })),
    );
    const warned = c.warnings.filter((w) => w.msg.includes("expires soon"));
    expect(warned.map((w) => w.fields).sort(byPlatform)).toEqual(
      ["linkedin", "reddit", "tiktok", "x"].map((platform) => ({
        accountId: rows[platform]!.warned,
        orgId: p.orgId,
        platform,
        expiresAt: soon.toISOString(),
      })),
    );
    // A second pass at the same instant: nothing new (warned once, the expired already marked).
    expect(await checkTokenExpiry(ctx, now)).toEqual({ warned: 0, expired: 0 });
  });
});
