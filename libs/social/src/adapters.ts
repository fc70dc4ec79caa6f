import type { Clock, Config } from "@site/config";
import type { PlatformAdapters } from "@site/domain/social";
import { INSTAGRAM_API_BASE, instagramAdapter } from "./instagram.ts";
import { LINKEDIN_API_BASE, linkedinAdapter } from "./linkedin.ts";
import { REDDIT_API_BASE, redditAdapter } from "./reddit.ts";
import { THREADS_API_BASE, threadsAdapter } from "./threads.ts";
import { TIKTOK_API_BASE, tiktokAdapter } from "./tiktok.ts";
import { X_API_BASE, xAdapter } from "./x.ts";

/**
 * One adapter per platform, at the base URLs of `SOCIAL_API_BASE_<PLATFORM>` or the real addresses; a
 * publication the platform does not date is dated by the context's clock.
 */
export function createPlatformAdapters(ctx: {
  config: Pick<Config, "socialApiBase">;
  clock: Clock;
}): PlatformAdapters {
  const base = ctx.config.socialApiBase;
  const { clock } = ctx;
  return {
    instagram: instagramAdapter(clock, base.instagram ?? INSTAGRAM_API_BASE),
    threads: threadsAdapter(clock, base.threads ?? THREADS_API_BASE),
    x: xAdapter(clock, base.x ?? X_API_BASE),
    linkedin: linkedinAdapter(clock, base.linkedin ?? LINKEDIN_API_BASE),
    reddit: redditAdapter(clock, base.reddit ?? REDDIT_API_BASE),
    tiktok: tiktokAdapter(clock, base.tiktok ?? TIKTOK_API_BASE),
  };
}
