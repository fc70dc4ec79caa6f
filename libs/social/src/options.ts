import type { Clock } from "@site/config";
import type { PollOptions } from "./_graph.ts";

/** What every adapter is built with. */
export type AdapterOptions = {
  /** Dates a publication the platform does not date. */
  clock: Clock;
  /** How long to wait for platform-side processing (Graph containers, TikTok, X video). */
  poll: PollOptions;
  /** The `LinkedIn-Version` header (YYYYMM) of LinkedIn's versioned REST API. */
  linkedinVersion: string;
  /** TikTok audited the app: without it, TikTok takes SELF_ONLY posts only (decision 1013). */
  tiktokAudited: boolean;
  /**
   * TikTok metrics are read (SOCIAL_TIKTOK_READ_METRICS, video.list asked at connect); off: TikTok targets
   * report null metrics, as the spec's further platform (decision 1032).
   */
  tiktokReadMetrics: boolean;
  /** URL prefixes verified with TikTok: media under them is pulled (PULL_FROM_URL), else uploaded. */
  tiktokVerifiedUrlPrefixes: string[];
  /** Reddit's User-Agent for a call made for `account` (null: the token call, no account yet). */
  redditUserAgent: (account: string | null) => string;
};
