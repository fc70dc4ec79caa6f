import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Logger } from "@site/config";
import { createOrganization, type Principal } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import { connectSocialAccount, listSocialAccounts } from "@site/domain/social";
import type { FakePlatforms } from "@site/social/testing";
import { type MetricsTestbed, startMetricsTestbed } from "../testing/mod.ts";
import { runCollectorPass } from "./collector.ts";

// Issue 24: an ordinary LinkedIn app gets no refresh token (partners only,
// https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens): the
// collector warns ahead of the 60-day expiry and marks the account reconnect_required once expired; it
// also warns ahead of an API version's sunset (decisions 1010, 1012).

const DAY = 86_400_000;
let bed: MetricsTestbed;
let ctx: MediaContext;
let fake: FakePlatforms;
beforeAll(async () => {
  bed = await startMetricsTestbed();
  ({ ctx, fake } = bed);
});
afterAll(() => bed.close());

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

async function seedOrg(): Promise<Principal> {
  const org = await createOrganization(ctx, { name: `Org ${Math.random().toString(36).slice(2, 7)}` });
  return { keyId: "k", orgId: org.id, userId: "u", scopes: ["social:write"], role: "owner" };
}

describe("tokens without a refresh token", () => {
  test("LinkedIn (no refresh token): a warning 7 days ahead, once; after expiry the account is reconnect_required with its expiresAt", async () => {
    const p = await seedOrg();
    const t0 = new Date(Date.now() + 1000 * DAY);
    const expiresAt = new Date(t0.getTime() + 60 * DAY);
    const t = fake.issueTokens("linkedin");
    const { account } = await connectSocialAccount(ctx, p, {
      platform: "linkedin",
      accountId: `li-${Math.random().toString(36).slice(2, 8)}`,
      accessToken: t.accessToken,
      expiresAt: expiresAt.toISOString(),
    });
    const early = capture();
    await runCollectorPass({ ...ctx, log: early.log }, { now: new Date(t0.getTime() + 10 * DAY) });
    expect(early.warnings.filter((w) => w.fields?.accountId === account.id)).toEqual([]);
    const ahead = capture();
    await runCollectorPass({ ...ctx, log: ahead.log }, { now: new Date(expiresAt.getTime() - 3 * DAY) });
    const mine = ahead.warnings.filter((w) => w.fields?.accountId === account.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.msg).toContain("expires soon");
    expect(mine[0]!.fields).toMatchObject({ platform: "linkedin", expiresAt: expiresAt.toISOString() });
    // Once per token.
    const again = capture();
    await runCollectorPass({ ...ctx, log: again.log }, { now: new Date(expiresAt.getTime() - 2 * DAY) });
    expect(again.warnings.filter((w) => w.fields?.accountId === account.id)).toEqual([]);
    expect((await listSocialAccounts(ctx, p))[0]).toMatchObject({ status: "connected" });
    const after = capture();
    await runCollectorPass({ ...ctx, log: after.log }, { now: new Date(expiresAt.getTime() + 3_600_000) });
    expect(after.warnings.find((w) => w.fields?.accountId === account.id)?.msg).toContain(
      "must be reconnected",
    );
    const [listed] = await listSocialAccounts(ctx, p);
    expect(listed).toMatchObject({ status: "reconnect_required", expiresAt: expiresAt.toISOString() });
  });

  test("an account with a refresh token is never warned about (it is renewed)", async () => {
    const p = await seedOrg();
    const t = fake.issueTokens("x");
    const expiresAt = new Date(Date.now() + 2 * DAY);
    const { account } = await connectSocialAccount(ctx, p, {
      platform: "x",
      accountId: `x-${Math.random().toString(36).slice(2, 8)}`,
      accessToken: t.accessToken,
      refreshToken: t.refreshToken!,
      expiresAt: expiresAt.toISOString(),
    });
    const c = capture();
    await runCollectorPass({ ...ctx, log: c.log }, { now: new Date() });
    expect(c.warnings.filter((w) => w.fields?.accountId === account.id)).toEqual([]);
  });
});

describe("API versions", () => {
  test("a Graph version within 90 days of its sunset is warned about at every pass", async () => {
    const c = capture();
    const config = { ...ctx.config, social: { ...ctx.config.social, graphVersion: "v21.0" } };
    await runCollectorPass({ ...ctx, config, log: c.log }, { now: new Date("2026-12-01T00:00:00Z") });
    const w = c.warnings.find((x) => x.msg === "social API version");
    expect(w?.fields).toMatchObject({
      setting: "SOCIAL_GRAPH_VERSION",
      version: "v21.0",
      sunset: "2027-01-21",
    });
  });
});
