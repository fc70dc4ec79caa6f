import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createLogger, loadConfig } from "@site/config";
import { type Context, sign } from "@site/domain/core";
import {
  GRANT_STEP_SECONDS,
  grantMemberUrl,
  grantOrgMemberUrl,
  grantVisitorUrl,
  MEMBER_GRANT_SECONDS,
  mediaPath,
  memberGrantExpiry,
  mintCampaignMediaToken,
  mintGrant,
  mintShareToken,
  readCampaignMediaToken,
  readGrant,
  readShareToken,
  SHARE_TOKEN_SECONDS,
  VISITOR_GRANT_SECONDS,
} from "./grants.ts";

// The delivery credentials of media (grants.ts): who a grant `k` is for, how long it and a share token `t`
// or a campaign mail's token live, and that each opens one path of one site, signed, unexpired and in its
// exact format only. Every function here is pure over the secret and the clock: the clock is set by hand.
// Also the focused test StrykerJS runs for grants.ts (docs/mutation/grants.md).

const SECRET = "test-secret-key-0123456789";
/** A context whose clock reads `ctx.at` (ms since the epoch, set by the test). */
function context(secretKey = SECRET): Context & { at: number } {
  const ctx = {
    config: loadConfig({ SECRET_KEY: secretKey, DATA_DIR: "/tmp/site-test-data" }),
    clock: { now: () => new Date(ctx.at) },
    log: createLogger("silent" as never),
    at: 0,
  };
  return ctx as unknown as Context & { at: number };
}
/** 26 Nov 2026 at hh:mm:ss.ms UTC, in milliseconds. */
const at = (h: number, m: number, s: number, ms = 0) => Date.UTC(2026, 10, 26, h, m, s, ms);
/** The same instant in whole seconds: an expiry. */
const sec = (h: number, m: number, s: number) => at(h, m, s) / 1000;
const DAY = 24 * 3600;

// Every hex digit's edges (0, 9, a, f) in every group of the UUID.
const SITE = "0a9f0a9f-0a9f-0a9f-0a9f-0a9f0a9f0a9f";
const KEY = `site-media/${SITE}/photo.png`;

/** A grant as the server signs one, for any fields: to present well-signed grants of a wrong format. */
const forgeGrant = (code: string, siteId: string, key: string, exp: string, secretKey = SECRET) =>
  `${code}.${siteId}.${exp}.${sign(secretKey, "media-grant", `${code}\n${siteId}\n${key}\n${Number(exp)}`)}`;
const forgeShare = (siteId: string, key: string, exp: string) =>
  `${siteId}.${exp}.${sign(SECRET, "media-grant", `s\n${siteId}\n${key}\n${Number(exp)}`)}`;
const forgeCampaign = (code: string, campaignId: string, generation: string, key: string, exp: string) =>
  `${code}.${campaignId}.${generation}.${exp}.${sign(SECRET, "media-grant", `n\n${campaignId}:${generation}\n${key}\n${Number(exp)}`)}`;

/** The five parts of a grant: kind code, site, expiry (seconds), signature. */
const parts = (grant: string) => grant.split(".");

describe("lifetimes", () => {
  test("member grants live 15 minutes, visitor grants a day, share tokens 7 days by default and 90 at most, on a 60 s step", () => {
    expect(MEMBER_GRANT_SECONDS).toBe(900);
    expect(VISITOR_GRANT_SECONDS).toBe(86_400);
    expect(SHARE_TOKEN_SECONDS).toEqual({ default: 604_800, max: 7_776_000 });
    expect(GRANT_STEP_SECONDS).toBe(60);
  });

  test("a member grant expires 15 minutes on, rounded up to the whole minute; memberGrantExpiry says when", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const grant = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    expect(parts(grant).slice(0, 3)).toEqual(["m", SITE, String(sec(12, 16, 0))]);
    expect(memberGrantExpiry(ctx)).toBe(sec(12, 16, 0));
    // The org grant of the social library lives as long.
    expect(parts(mintGrant(ctx, { kind: "org", siteId: SITE, key: KEY }))[2]).toBe(String(sec(12, 16, 0)));
  });

  test("the lifetime counts from the current whole second: within the first second of a minute, no extra minute", () => {
    const ctx = context();
    ctx.at = at(12, 0, 0, 500);
    expect(memberGrantExpiry(ctx)).toBe(sec(12, 15, 0));
    expect(parts(mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY }))[2]).toBe(String(sec(12, 15, 0)));
    ctx.at = at(12, 0, 1);
    expect(memberGrantExpiry(ctx)).toBe(sec(12, 16, 0));
  });

  test("a visitor grant expires a day on, rounded up to the whole minute", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const grant = mintGrant(ctx, { kind: "visitor", siteId: SITE, key: KEY });
    expect(parts(grant).slice(0, 3)).toEqual(["v", SITE, String(sec(12, 1, 0) + DAY)]);
  });

  test("an explicit lifetime is exact to the second, not rounded to the minute (member and visitor alike)", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 999);
    expect(parts(mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY, ttlSeconds: 61 }))[2]).toBe(
      String(sec(12, 1, 31)),
    );
    expect(parts(mintGrant(ctx, { kind: "visitor", siteId: SITE, key: KEY, ttlSeconds: 1 }))[2]).toBe(
      String(sec(12, 0, 31)),
    );
  });

  test("a share token lives 7 days to the second by default, or exactly the lifetime asked for", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    expect(parts(mintShareToken(ctx, { siteId: SITE, key: KEY }))[1]).toBe(String(sec(12, 0, 30) + 7 * DAY));
    expect(parts(mintShareToken(ctx, { siteId: SITE, key: KEY, ttlSeconds: 3600 }))[1]).toBe(
      String(sec(13, 0, 30)),
    );
  });

  test("a campaign mail's token lives exactly the lifetime asked for", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const campaign = randomUUID();
    const token = mintCampaignMediaToken(ctx, {
      campaignId: campaign,
      generation: 3,
      key: KEY,
      ttlSeconds: 365 * DAY,
    });
    expect(parts(token).slice(0, 4)).toEqual(["n", campaign, "3", String(sec(12, 0, 30) + 365 * DAY)]);
  });

  test("every default grant of one path minted within one minute is the same string; the next second starts another", () => {
    const ctx = context();
    ctx.at = at(11, 59, 1);
    const first = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    ctx.at = at(12, 0, 0, 999);
    expect(mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY })).toBe(first);
    ctx.at = at(12, 0, 1);
    const next = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    expect(next).not.toBe(first);
    expect(readGrant(ctx, KEY, next)).toEqual({ kind: "member", siteId: SITE });
    expect(readGrant(ctx, KEY, first)).toEqual({ kind: "member", siteId: SITE });
  });
});

describe("signatures and their format", () => {
  test("a grant is the HMAC of (kind, site, key, expiry) under the media-grant purpose: outstanding grants and tokens survive an upgrade", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const exp = String(sec(12, 16, 0));
    expect(mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY })).toBe(forgeGrant("m", SITE, KEY, exp));
    expect(mintGrant(ctx, { kind: "org", siteId: SITE, key: KEY })).toBe(forgeGrant("o", SITE, KEY, exp));
    const vexp = String(sec(12, 1, 0) + DAY);
    expect(mintGrant(ctx, { kind: "visitor", siteId: SITE, key: KEY })).toBe(
      forgeGrant("v", SITE, KEY, vexp),
    );
    expect(mintGrant(ctx, { kind: "visitor", siteId: SITE, key: KEY, ttlSeconds: 30 })).toBe(
      forgeGrant("v", SITE, KEY, String(sec(12, 1, 0))),
    );
    expect(mintShareToken(ctx, { siteId: SITE, key: KEY, ttlSeconds: 30 })).toBe(
      forgeShare(SITE, KEY, String(sec(12, 1, 0))),
    );
    const campaign = randomUUID();
    expect(
      mintCampaignMediaToken(ctx, { campaignId: campaign, generation: 7, key: KEY, ttlSeconds: 30 }),
    ).toBe(forgeCampaign("n", campaign, "7", KEY, String(sec(12, 1, 0))));
    // The bytes themselves, fixed (HMAC-SHA256 keyed by HMAC(secret, "purpose:media-grant"), checked with
    // node:crypto): a one-year campaign link in last month's mail must still open after an upgrade.
    expect(mintShareToken(ctx, { siteId: SITE, key: KEY, ttlSeconds: 30 })).toBe(
      `${SITE}.${sec(12, 1, 0)}.m0Sys6fB3SMG_vKB4nOBjSJmoWC25jLz0q7owl-Dlls`,
    );
  });

  test("each kind reads back as itself: visitor, member, org", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    for (const kind of ["visitor", "member", "org"] as const) {
      expect(readGrant(ctx, KEY, mintGrant(ctx, { kind, siteId: SITE, key: KEY }))).toEqual({
        kind,
        siteId: SITE,
      });
      expect(readGrant(ctx, KEY, mintGrant(ctx, { kind, siteId: SITE, key: KEY, ttlSeconds: 5 }))).toEqual({
        kind,
        siteId: SITE,
      });
    }
  });

  test("a grant opens its one path of its one site, under its secret: any other key, site, kind, expiry or signature is refused", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const grant = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    const [, , exp, sig] = parts(grant);
    expect(readGrant(ctx, KEY, grant)).toEqual({ kind: "member", siteId: SITE });
    expect(readGrant(ctx, `site-media/${SITE}/other.png`, grant)).toBeNull();
    expect(readGrant(ctx, KEY, `m.${randomUUID()}.${exp}.${sig}`)).toBeNull();
    expect(readGrant(ctx, KEY, `v.${SITE}.${exp}.${sig}`)).toBeNull();
    expect(readGrant(ctx, KEY, `o.${SITE}.${exp}.${sig}`)).toBeNull();
    expect(readGrant(ctx, KEY, `m.${SITE}.${Number(exp) + 60}.${sig}`)).toBeNull();
    expect(readGrant(ctx, KEY, `${grant.slice(0, -2)}xx`)).toBeNull();
    expect(readGrant(context("another-secret-key-0123456789"), KEY, grant)).toBeNull();
  });

  test("the kinds do not stand in for one another: a share token's or a campaign token's signature is no grant", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const share = mintShareToken(ctx, { siteId: SITE, key: KEY });
    expect(readShareToken(ctx, KEY, share)).toEqual({ siteId: SITE });
    // The share token's own signature, presented as a grant of kind "s", or as any of the three.
    for (const code of ["s", "v", "m", "o"]) expect(readGrant(ctx, KEY, `${code}.${share}`)).toBeNull();
    // A grant's signature without its kind is no share token.
    const member = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    expect(readShareToken(ctx, KEY, member.slice(2))).toBeNull();
    // A grant whose kind code is unknown is refused, however well signed.
    const exp = String(sec(13, 0, 0));
    for (const code of ["s", "n", "x", "V", "mm", ""])
      expect(readGrant(ctx, KEY, forgeGrant(code, SITE, KEY, exp))).toBeNull();
    expect(readGrant(ctx, KEY, forgeGrant("o", SITE, KEY, exp))).toEqual({ kind: "org", siteId: SITE });
  });

  test("a grant has exactly four parts: one more, even well signed, is refused", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const grant = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    expect(readGrant(ctx, KEY, `${grant}.x`)).toBeNull();
    expect(readGrant(ctx, KEY, `${grant}.`)).toBeNull();
    expect(readGrant(ctx, KEY, grant.split(".").slice(0, 3).join("."))).toBeNull();
    expect(readGrant(ctx, KEY, "")).toBeNull();
    expect(readGrant(ctx, KEY, "m.bogus")).toBeNull();
  });

  test("the site of a grant is a lowercase UUID, nothing else, however well signed", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const exp = String(sec(13, 0, 0));
    expect(readGrant(ctx, KEY, forgeGrant("m", SITE, KEY, exp))).toEqual({ kind: "member", siteId: SITE });
    for (const siteId of notUuids(SITE))
      expect(readGrant(ctx, KEY, forgeGrant("m", siteId, KEY, exp))).toBeNull();
  });

  test("the expiry of a grant is 1 to 12 decimal digits, however well signed", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const ok = forgeGrant("m", SITE, KEY, "999999999999");
    expect(readGrant(ctx, KEY, ok)).toEqual({ kind: "member", siteId: SITE });
    for (const exp of badExpiries) expect(readGrant(ctx, KEY, forgeGrant("m", SITE, KEY, exp))).toBeNull();
  });

  test("a grant is valid up to the millisecond before its expiry, not at it", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const grant = mintGrant(ctx, { kind: "visitor", siteId: SITE, key: KEY, ttlSeconds: 10 });
    ctx.at = at(12, 0, 39, 999);
    expect(readGrant(ctx, KEY, grant)).toEqual({ kind: "visitor", siteId: SITE });
    ctx.at = at(12, 0, 40);
    expect(readGrant(ctx, KEY, grant)).toBeNull();
    // A default member grant minted at 12:00:30 opens until 12:16:00 (15 minutes and the rest of the minute).
    ctx.at = at(12, 0, 30);
    const member = mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY });
    ctx.at = at(12, 15, 59, 999);
    expect(readGrant(ctx, KEY, member)).toEqual({ kind: "member", siteId: SITE });
    ctx.at = at(12, 16, 0);
    expect(readGrant(ctx, KEY, member)).toBeNull();
    // Already expired when minted.
    ctx.at = at(12, 0, 30);
    expect(
      readGrant(ctx, KEY, mintGrant(ctx, { kind: "member", siteId: SITE, key: KEY, ttlSeconds: -1 })),
    ).toBeNull();
  });
});

describe("share tokens", () => {
  test("a share token opens its one path of its one site until the millisecond before its expiry", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const token = mintShareToken(ctx, { siteId: SITE, key: KEY, ttlSeconds: 10 });
    const [, exp, sig] = parts(token);
    expect(readShareToken(ctx, KEY, token)).toEqual({ siteId: SITE });
    expect(readShareToken(ctx, `site-media/${SITE}/other.png`, token)).toBeNull();
    expect(readShareToken(ctx, KEY, `${randomUUID()}.${exp}.${sig}`)).toBeNull();
    expect(readShareToken(ctx, KEY, `${SITE}.${Number(exp) + 1}.${sig}`)).toBeNull();
    expect(readShareToken(ctx, KEY, `${token.slice(0, -2)}xx`)).toBeNull();
    expect(readShareToken(context("another-secret-key-0123456789"), KEY, token)).toBeNull();
    ctx.at = at(12, 0, 39, 999);
    expect(readShareToken(ctx, KEY, token)).toEqual({ siteId: SITE });
    ctx.at = at(12, 0, 40);
    expect(readShareToken(ctx, KEY, token)).toBeNull();
  });

  test("a share token has exactly three parts, a lowercase UUID site and a 1-to-12-digit expiry, however well signed", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const exp = String(sec(13, 0, 0));
    const token = forgeShare(SITE, KEY, exp);
    expect(readShareToken(ctx, KEY, token)).toEqual({ siteId: SITE });
    expect(readShareToken(ctx, KEY, forgeShare(SITE, KEY, "999999999999"))).toEqual({ siteId: SITE });
    expect(readShareToken(ctx, KEY, `${token}.x`)).toBeNull();
    expect(readShareToken(ctx, KEY, `${token}.`)).toBeNull();
    expect(readShareToken(ctx, KEY, `${SITE}.${exp}`)).toBeNull();
    expect(readShareToken(ctx, KEY, `${SITE}.${exp}.`)).toBeNull();
    expect(readShareToken(ctx, KEY, "")).toBeNull();
    for (const siteId of notUuids(SITE))
      expect(readShareToken(ctx, KEY, forgeShare(siteId, KEY, exp))).toBeNull();
    for (const bad of badExpiries) expect(readShareToken(ctx, KEY, forgeShare(SITE, KEY, bad))).toBeNull();
  });
});

describe("campaign mail tokens", () => {
  const campaign = "0a9f0a9f-0a9f-4a9f-8a9f-0a9f0a9f0a9f";

  test("a campaign token opens its one path, names its campaign and media generation, until the millisecond before its expiry", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30, 500);
    const token = mintCampaignMediaToken(ctx, {
      campaignId: campaign,
      generation: 12,
      key: KEY,
      ttlSeconds: 10,
    });
    expect(readCampaignMediaToken(ctx, KEY, token)).toEqual({ campaignId: campaign, generation: 12 });
    const [, , , exp, sig] = parts(token);
    expect(readCampaignMediaToken(ctx, `site-media/${SITE}/other.png`, token)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `n.${randomUUID()}.12.${exp}.${sig}`)).toBeNull();
    // Another generation (the links were revoked and signed anew) is another signature.
    expect(readCampaignMediaToken(ctx, KEY, `n.${campaign}.13.${exp}.${sig}`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `n.${campaign}.12.${Number(exp) + 1}.${sig}`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `${token.slice(0, -2)}xx`)).toBeNull();
    expect(readCampaignMediaToken(context("another-secret-key-0123456789"), KEY, token)).toBeNull();
    ctx.at = at(12, 0, 39, 999);
    expect(readCampaignMediaToken(ctx, KEY, token)).toEqual({ campaignId: campaign, generation: 12 });
    ctx.at = at(12, 0, 40);
    expect(readCampaignMediaToken(ctx, KEY, token)).toBeNull();
  });

  test("a campaign token is n.<uuid>.<1-9 digits>.<1-12 digits>.<sig>, nothing else, however well signed", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const exp = String(sec(13, 0, 0));
    const token = forgeCampaign("n", campaign, "0", KEY, exp);
    expect(readCampaignMediaToken(ctx, KEY, token)).toEqual({ campaignId: campaign, generation: 0 });
    expect(
      readCampaignMediaToken(ctx, KEY, forgeCampaign("n", campaign, "999999999", KEY, "999999999999")),
    ).toEqual({
      campaignId: campaign,
      generation: 999_999_999,
    });
    for (const code of ["", "x", "N", "s", "nn"])
      expect(readCampaignMediaToken(ctx, KEY, forgeCampaign(code, campaign, "0", KEY, exp))).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `${token}.x`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `${token}.`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `n.${campaign}.0.${exp}`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, `n.${campaign}.0.${exp}.`)).toBeNull();
    expect(readCampaignMediaToken(ctx, KEY, "")).toBeNull();
    for (const id of notUuids(campaign))
      expect(readCampaignMediaToken(ctx, KEY, forgeCampaign("n", id, "0", KEY, exp))).toBeNull();
    // A generation that is not 1 to 9 digits (the column is a 32-bit integer).
    for (const generation of ["", "1234567890", "-1", "1e3", "0x1", " 1", "1 ", "1.5", "a1", "1a"])
      expect(readCampaignMediaToken(ctx, KEY, forgeCampaign("n", campaign, generation, KEY, exp))).toBeNull();
    for (const bad of badExpiries)
      expect(readCampaignMediaToken(ctx, KEY, forgeCampaign("n", campaign, "0", KEY, bad))).toBeNull();
  });
});

describe("delivery paths and URLs", () => {
  test("a plain key is its path under /api/media/ as it is; any other character is escaped per segment, slashes kept", () => {
    expect(mediaPath(KEY)).toBe(`/api/media/${KEY}`);
    expect(mediaPath("site-media/A-Z_a.z~0-9/x.png")).toBe("/api/media/site-media/A-Z_a.z~0-9/x.png");
    expect(mediaPath("site-media/s/a b.png")).toBe("/api/media/site-media/s/a%20b.png");
    expect(mediaPath("a b/c?d/e#f%g.png")).toBe("/api/media/a%20b/c%3Fd/e%23f%25g.png");
    expect(mediaPath("é/x.png")).toBe("/api/media/%C3%A9/x.png");
    expect(mediaPath("x.png ")).toBe("/api/media/x.png%20");
    expect(mediaPath(" x.png")).toBe("/api/media/%20x.png");
    // A key with none of the plain characters at all is escaped too.
    expect(mediaPath("é")).toBe("/api/media/%C3%A9");
    expect(mediaPath("?#")).toBe("/api/media/%3F%23");
  });

  test("the visitor, member and org URLs carry a grant of their kind for that path", () => {
    const ctx = context();
    ctx.at = at(12, 0, 30);
    const key = `site-media/${SITE}/a b.png`;
    const org = randomUUID();
    const cases = [
      [grantVisitorUrl(ctx, SITE, key), "visitor", SITE],
      [grantMemberUrl(ctx, SITE, key), "member", SITE],
      [grantOrgMemberUrl(ctx, org, key), "org", org],
    ] as const;
    for (const [url, kind, siteId] of cases) {
      const [path, k] = url.split("?k=");
      expect(path).toBe(`/api/media/site-media/${SITE}/a%20b.png`);
      expect(readGrant(ctx, key, k!)).toEqual({ kind, siteId });
    }
    expect(grantMemberUrl(ctx, SITE, key)).toBe(
      `${mediaPath(key)}?k=${mintGrant(ctx, { kind: "member", siteId: SITE, key })}`,
    );
  });
});

describe("the signatures of one minute, computed once", () => {
  test("each path, site, kind and secret keeps its own signature within the minute; the next minute signs anew", () => {
    const a = context();
    const b = context("another-secret-key-0123456789");
    a.at = at(12, 0, 30);
    b.at = at(12, 0, 30);
    const other = `site-media/${SITE}/other.png`;
    const site2 = randomUUID();
    const minted = [
      [a, mintGrant(a, { kind: "member", siteId: SITE, key: KEY }), KEY, "member", SITE],
      [a, mintGrant(a, { kind: "member", siteId: SITE, key: other }), other, "member", SITE],
      [a, mintGrant(a, { kind: "member", siteId: site2, key: KEY }), KEY, "member", site2],
      [a, mintGrant(a, { kind: "org", siteId: SITE, key: KEY }), KEY, "org", SITE],
      [b, mintGrant(b, { kind: "member", siteId: SITE, key: KEY }), KEY, "member", SITE],
      [a, mintGrant(a, { kind: "visitor", siteId: SITE, key: KEY }), KEY, "visitor", SITE],
      [a, mintGrant(a, { kind: "member", siteId: SITE, key: KEY }), KEY, "member", SITE],
    ] as const;
    for (const [ctx, grant, key, kind, siteId] of minted)
      expect(readGrant(ctx, key, grant)).toEqual({ kind, siteId });
    expect(new Set(minted.slice(0, 6).map(([, g]) => parts(g)[3])).size).toBe(6);
    // A minute later: a new expiry, a new signature, and both the old grant and the new one open.
    a.at = at(12, 1, 30);
    const later = mintGrant(a, { kind: "member", siteId: SITE, key: KEY });
    expect(parts(later)[2]).toBe(String(sec(12, 17, 0)));
    expect(readGrant(a, KEY, later)).toEqual({ kind: "member", siteId: SITE });
    expect(readGrant(a, KEY, minted[0][1])).toEqual({ kind: "member", siteId: SITE });
    // And back to the first minute's expiry (explicit: a new generation of the memo for the old one).
    a.at = at(12, 0, 30);
    expect(mintGrant(a, { kind: "member", siteId: SITE, key: KEY })).toBe(minted[0][1]);
  });
});

/** Strings that are not a lowercase UUID, each near `id`: a character off in each group, a group one longer or shorter, junk around, upper case. */
function notUuids(id: string): string[] {
  const groups = id.split("-");
  const out = [
    `x${id}`,
    `${id}x`,
    ` ${id}`,
    `${id} `,
    id.toUpperCase(),
    id.replaceAll("-", ""),
    `${id}-0`,
    "",
    "x",
  ];
  for (let i = 0; i < groups.length; i++) {
    const change = (g: string) => groups.map((h, j) => (j === i ? g : h)).join("-");
    const g = groups[i]!;
    out.push(change(`g${g.slice(1)}`), change(`${g.slice(0, -1)}G`), change(`${g}0`), change(g.slice(1)));
  }
  return out;
}

/** Expiries that are not 1 to 12 decimal digits; each is a number Number() reads, far in the future or not. */
const badExpiries = [
  "9999999999999",
  "1e12",
  "0x1ffffffffff",
  " 1800000000",
  "1800000000 ",
  "+1800000000",
  "",
  "Infinity",
];
