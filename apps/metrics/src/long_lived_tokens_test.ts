import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DbHandle } from "@site/db";
import { createOrganization, decryptSecret, type Principal } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import {
  connectSocialAccount,
  listSocialAccounts,
  readyAccount,
  type SocialPlatform,
} from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";
import type { FakePlatforms } from "@site/social/testing";
import { type MetricsTestbed, startMetricsTestbed } from "../testing/mod.ts";
import { runCollectorPass } from "./collector.ts";

// Issue 33, "tokens that never lapse": Instagram's and Threads' 60-day tokens can be renewed only while
// they are valid and at least 24 hours old (the strict fake refuses otherwise, as Meta does), so the
// metrics app's schedule renews them in the background, whether or not the account is used. An account
// connected on day 0 and left alone is still connected, with a token the platform takes, on day 90.

const HOUR = 3_600_000;
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

/** An account holding the 60-day token the fake issued at `t0` (the fake's clock), as connect stores it. */
async function connectAt(p: Principal, platform: SocialPlatform, t0: Date) {
  fake.setNow(t0);
  const t = fake.issueTokens(platform);
  const { account } = await connectSocialAccount({ ...ctx, clock: { now: () => t0 } }, p, {
    platform,
    accountId: t.user,
    accessToken: t.accessToken,
    expiresAt: t.expiresAt.toISOString(),
  });
  return { id: account.id, token: t.accessToken };
}

/** One pass of the metrics app's schedule at `at`, the platforms' clock moved there too. */
async function passAt(at: Date) {
  fake.setNow(at);
  await runCollectorPass({ ...ctx, clock: { now: () => at } }, { now: at });
}

const tokenOf = async (id: string) => {
  const [row] = await handle.sql<{ token_ciphertext: string; token_expires_at: Date }[]>`
    select token_ciphertext, token_expires_at from social_accounts where id = ${id}`;
  return {
    token: decryptSecret(ctx.config.secretKey, row!.token_ciphertext),
    expiresAt: new Date(row!.token_expires_at).getTime(),
  };
};

describe("Instagram's and Threads' 60-day tokens never lapse", () => {
  test("connected on day 0 and never used: renewed in the background, still connected on day 90 with a token the platform takes", async () => {
    const p = await seedOrg();
    const t0 = new Date(Date.now() - 100 * DAY);
    const ig = await connectAt(p, "instagram", t0);
    const th = await connectAt(p, "threads", t0);
    const before = { instagram: fake.refreshCount("instagram"), threads: fake.refreshCount("threads") };
    // The first hour: the token is under 24 hours old, which Meta refuses to refresh: nothing is asked.
    await passAt(new Date(t0.getTime() + HOUR));
    expect(fake.refreshCount("instagram") - before.instagram).toBe(0);
    // The hourly schedule, sampled once a day for 90 days.
    for (let day = 1; day <= 90; day++) await passAt(new Date(t0.getTime() + day * DAY));
    const day90 = new Date(t0.getTime() + 90 * DAY);
    for (const [platform, a] of [
      ["instagram", ig],
      ["threads", th],
    ] as const) {
      const renewed = fake.refreshCount(platform) - before[platform];
      expect(renewed).toBeGreaterThanOrEqual(2);
      // Not at every pass: once the token is some days old.
      expect(renewed).toBeLessThanOrEqual(30);
      const now = await tokenOf(a.id);
      expect(now.token).not.toBe(a.token);
      expect(now.expiresAt).toBeGreaterThan(day90.getTime() + 30 * DAY);
      // Used on day 90 as it is (no renewal needed), and the platform takes it.
      const ready = await readyAccount(ctx, a.id, createPlatformAdapters(ctx), day90);
      expect(ready.accessToken).toBe(now.token);
      const me = await fetch(`${fake.graphBases[platform]}/me?fields=id`, {
        headers: { authorization: `Bearer ${now.token}` },
      });
      expect(me.status).toBe(200);
    }
    const accounts = await listSocialAccounts(ctx, p);
    expect(accounts.map((a) => a.status)).toEqual(["connected", "connected"]);
  }, 120_000);

  test("the fake refuses to refresh an expired Meta token (190) and one under 24 hours old, as Meta does", async () => {
    const t0 = new Date(Date.now() - 100 * DAY);
    fake.setNow(t0);
    const t = fake.issueTokens("instagram");
    const refresh = () =>
      fetch(
        `${fake.oauthEnv.SOCIAL_AUTH_BASE_INSTAGRAM}/refresh_access_token?grant_type=ig_refresh_token&access_token=${t.accessToken}`,
      );
    const young = await refresh();
    expect(young.status).toBe(400);
    fake.setNow(new Date(t0.getTime() + 61 * DAY));
    const expired = await refresh();
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as { error: { code: number } }).error.code).toBe(190);
  });
});
