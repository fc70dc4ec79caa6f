import type { Config } from "@site/config";
import type { PlatformAdapters } from "@site/domain";
import { INSTAGRAM_API_BASE, instagramAdapter } from "./instagram.ts";
import { LINKEDIN_API_BASE, linkedinAdapter } from "./linkedin.ts";
import { REDDIT_API_BASE, redditAdapter } from "./reddit.ts";
import { THREADS_API_BASE, threadsAdapter } from "./threads.ts";
import { TIKTOK_API_BASE, tiktokAdapter } from "./tiktok.ts";
import { X_API_BASE, xAdapter } from "./x.ts";

/** One adapter per platform, at the base URLs of `SOCIAL_API_BASE_<PLATFORM>` or the real addresses. */
export function createPlatformAdapters(config: Pick<Config, "socialApiBase">): PlatformAdapters {
  const base = config.socialApiBase;
  return {
    instagram: instagramAdapter(base.instagram ?? INSTAGRAM_API_BASE),
    threads: threadsAdapter(base.threads ?? THREADS_API_BASE),
    x: xAdapter(base.x ?? X_API_BASE),
    linkedin: linkedinAdapter(base.linkedin ?? LINKEDIN_API_BASE),
    reddit: redditAdapter(base.reddit ?? REDDIT_API_BASE),
    tiktok: tiktokAdapter(base.tiktok ?? TIKTOK_API_BASE),
  };
}
