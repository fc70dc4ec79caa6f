import type { Clock } from "@site/config";
import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  type PlatformError,
} from "@site/domain/social";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";

/** LinkedIn's REST API's real address. */
export const LINKEDIN_API_BASE = "https://api.linkedin.com";
const LINKEDIN_VERSION = "202411";

function linkedinError(a: ApiAnswer): PlatformError {
  const b = (a.body ?? {}) as { message?: string; code?: string; serviceErrorCode?: number };
  return statusError(a, `${b.code ?? `HTTP ${a.status}`}: ${b.message ?? ""}`.trim());
}

/** The author URN of an account: its id when already a URN, else a member. */
function authorUrn(accountId: string): string {
  return accountId.startsWith("urn:li:") ? accountId : `urn:li:person:${accountId}`;
}

/**
 * LinkedIn (professional network): `POST /rest/posts`, then likes and comments from
 * `GET /rest/socialActions/{urn}`. LinkedIn exposes no view, share or save counts: those stay null.
 */
export function linkedinAdapter(clock: Clock, base = LINKEDIN_API_BASE): PlatformAdapter {
  const headers = (a: AdapterAccount) => ({
    authorization: `Bearer ${a.accessToken}`,
    "linkedin-version": LINKEDIN_VERSION,
    "x-restli-protocol-version": "2.0.0",
  });
  return {
    platform: "linkedin",
    async publish(account, text) {
      const a = await callPlatform(endpoint(base, "/rest/posts"), {
        method: "POST",
        headers: { ...headers(account), "content-type": "application/json" },
        body: JSON.stringify({
          author: authorUrn(account.accountId),
          commentary: text,
          visibility: "PUBLIC",
          distribution: {
            feedDistribution: "MAIN_FEED",
            targetEntities: [],
            thirdPartyDistributionChannels: [],
          },
          lifecycleState: "PUBLISHED",
          isReshareDisabledByAuthor: false,
        }),
      });
      const urn = a.headers.get("x-restli-id");
      if (!ok(a) || !urn) throw linkedinError(a);
      return {
        platformPostId: urn,
        url: `https://www.linkedin.com/feed/update/${urn}/`,
        publishedAt: clock.now(),
      };
    },
    async readMetrics(account, target) {
      const a = await callPlatform(
        endpoint(base, `/rest/socialActions/${encodeURIComponent(target.platformPostId)}`),
        { headers: headers(account) },
      );
      if (!ok(a)) throw linkedinError(a);
      const b = a.body as {
        likesSummary?: { totalLikes?: unknown; aggregatedTotalLikes?: unknown };
        commentsSummary?: { totalFirstLevelComments?: unknown; aggregatedTotalComments?: unknown };
      };
      return buildReading(
        {
          likes: num(b.likesSummary?.totalLikes) ?? num(b.likesSummary?.aggregatedTotalLikes),
          comments:
            num(b.commentsSummary?.aggregatedTotalComments) ??
            num(b.commentsSummary?.totalFirstLevelComments),
        },
        { likes: "platform_error", comments: "platform_error" },
      );
    },
  };
}
