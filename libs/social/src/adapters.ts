import type { Clock, Config } from "@site/config";
import {
  type PlatformAdapter,
  type PlatformAdapters,
  SOCIAL_PLATFORMS,
  type SocialPlatform,
} from "@site/domain/social";
import { DEFAULT_POLL } from "./_graph.ts";
import { instagramAdapter } from "./instagram.ts";
import { LINKEDIN_API_BASE, LINKEDIN_DEFAULT_VERSION, linkedinAdapter } from "./linkedin.ts";
import { type OAuthClient, renewToken } from "./oauth.ts";
import type { AdapterOptions } from "./options.ts";
import { REDDIT_API_BASE, redditAdapter, redditUserAgent } from "./reddit.ts";
import { threadsAdapter } from "./threads.ts";
import { TIKTOK_API_BASE, tiktokAdapter } from "./tiktok.ts";
import { graphBase } from "./versions.ts";
import { X_API_BASE, xAdapter } from "./x.ts";

export { DEFAULT_POLL, type PollOptions } from "./_graph.ts";
export { createOAuthPort } from "./connect.ts";
export { LINKEDIN_DEFAULT_VERSION, linkedinLittleText } from "./linkedin.ts";
export { authorizeUrl, exchangeCode, OAUTH, type OAuthClient, pkcePair, renewToken } from "./oauth.ts";
export type { AdapterOptions } from "./options.ts";
export { redditUserAgent } from "./reddit.ts";
export { apiVersionWarnings, GRAPH_DEFAULT_VERSION, GRAPH_VERSION_SUNSETS, graphBase } from "./versions.ts";

type SocialSettings = Config["social"];

/**
 * One adapter per platform, at the base URLs of `SOCIAL_API_BASE_<PLATFORM>` or the real addresses; a
 * publication the platform does not date is dated by the context's clock. `social` (LINKEDIN_API_VERSION,
 * SOCIAL_POLL_INTERVAL_MS, SOCIAL_POLL_MAX_ATTEMPTS) defaults when absent.
 */
export function createPlatformAdapters(ctx: {
  config: Pick<Config, "socialApiBase"> & {
    social?: Pick<SocialSettings, "linkedinVersion" | "poll"> & Partial<SocialSettings>;
  };
  clock: Clock;
}): PlatformAdapters {
  const base = ctx.config.socialApiBase;
  const opts: AdapterOptions = {
    clock: ctx.clock,
    poll: ctx.config.social?.poll ?? DEFAULT_POLL,
    linkedinVersion: ctx.config.social?.linkedinVersion ?? LINKEDIN_DEFAULT_VERSION,
    tiktokAudited: ctx.config.social?.tiktokAudited ?? false,
    tiktokReadMetrics: ctx.config.social?.tiktokReadMetrics ?? false,
    tiktokVerifiedUrlPrefixes: ctx.config.social?.tiktokVerifiedUrlPrefixes ?? [],
    redditUserAgent: (account) =>
      redditUserAgent(
        ctx.config.social?.clients?.reddit?.id ?? null,
        ctx.config.social?.redditDeveloper,
        account,
      ),
  };
  const adapters: Record<SocialPlatform, PlatformAdapter> = {
    instagram: instagramAdapter(opts, graphBase(ctx.config, "instagram")),
    threads: threadsAdapter(opts, graphBase(ctx.config, "threads")),
    x: xAdapter(opts, base.x ?? X_API_BASE),
    linkedin: linkedinAdapter(opts, base.linkedin ?? LINKEDIN_API_BASE),
    reddit: redditAdapter(opts, base.reddit ?? REDDIT_API_BASE),
    tiktok: tiktokAdapter(opts, base.tiktok ?? TIKTOK_API_BASE),
  };
  // With the platform's OAuth client configured, tokens are renewed before they expire.
  for (const platform of SOCIAL_PLATFORMS) {
    const client = oauthClient(ctx.config, platform);
    if (client)
      adapters[platform].renew = (current, now) =>
        renewToken(platform, client, current, now, opts.redditUserAgent(current.accountId ?? null));
  }
  return adapters;
}

/** The OAuth client of `platform` (SOCIAL_<PLATFORM>_CLIENT_ID/SECRET, SOCIAL_AUTH_BASE_<PLATFORM>), or null. */
export function oauthClient(
  config: { social?: Partial<Pick<SocialSettings, "clients" | "authBase">> },
  platform: SocialPlatform,
): OAuthClient | null {
  const c = config.social?.clients?.[platform];
  return c ? { id: c.id, secret: c.secret, authBase: config.social?.authBase?.[platform] ?? null } : null;
}
