import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  type PublishMedia,
  platformMediaViolation,
} from "@site/domain/social";
import { pollUntil } from "./_graph.ts";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";

/** LinkedIn's REST API's real address. */
export const LINKEDIN_API_BASE = "https://api.linkedin.com";
/**
 * The default `LinkedIn-Version`: 202607 (July 2026). Each monthly version is supported for at least a
 * year (https://learn.microsoft.com/en-us/linkedin/marketing/versioning); LINKEDIN_API_VERSION moves it.
 */
export const LINKEDIN_DEFAULT_VERSION = "202607";

function linkedinError(a: ApiAnswer, version: string): PlatformError {
  const b = (a.body ?? {}) as { message?: string; code?: string; serviceErrorCode?: number };
  // 426 is LinkedIn's answer to a sunset (or unknown) version: name it, it is a setting to change.
  if (a.status === 426)
    return new PlatformError(
      "rejected",
      `linkedin: API version sunset: LinkedIn-Version ${version} is no longer served (426 ${b.code ?? ""}); set LINKEDIN_API_VERSION to a supported version`,
      { status: 426 },
    );
  return statusError(a, `${b.code ?? `HTTP ${a.status}`}: ${b.message ?? ""}`.trim());
}

/**
 * Commentary in LinkedIn's "little text" format: the reserved characters `\ | { } @ [ ] ( ) < > # * _ ~`
 * are escaped with a backslash, else LinkedIn answers 201 and keeps the text only up to the first of
 * them (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/little-text-format).
 * Hashtags and mentions therefore go out as plain text (decision 1012).
 */
export function linkedinLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (c) => `\\${c}`);
}

/** The author URN of an account: its id when already a URN, else a member. */
function authorUrn(accountId: string): string {
  return accountId.startsWith("urn:li:") ? accountId : `urn:li:person:${accountId}`;
}

/**
 * LinkedIn (professional network): images through the Images API (`initializeUpload`, a PUT of the
 * bytes, then the post with the image URN, or a `multiImage` of 2–20), a video through the Videos API
 * (the post's `content.media.id` is its URN), `POST /rest/posts`, then likes and
 * comments from `GET /rest/socialActions/{urn}`. LinkedIn exposes no view, share or save counts.
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
 */
export function linkedinAdapter(opts: AdapterOptions, base = LINKEDIN_API_BASE): PlatformAdapter {
  const version = opts.linkedinVersion;
  const headers = (a: AdapterAccount) => ({
    authorization: `Bearer ${a.accessToken}`,
    "linkedin-version": version,
    "x-restli-protocol-version": "2.0.0",
  });
  async function uploadImage(account: AdapterAccount, m: PublishMedia): Promise<string> {
    const init = await callPlatform(endpoint(base, "/rest/images", { action: "initializeUpload" }), {
      method: "POST",
      headers: { ...headers(account), "content-type": "application/json" },
      body: JSON.stringify({ initializeUploadRequest: { owner: authorUrn(account.accountId) } }),
    });
    const value = (init.body as { value?: { uploadUrl?: string; image?: string } } | null)?.value;
    if (!ok(init) || !value?.uploadUrl || !value.image) throw linkedinError(init, version);
    const put = await callPlatform(value.uploadUrl, {
      method: "PUT",
      headers: { authorization: `Bearer ${account.accessToken}`, "content-type": m.contentType },
      body: await m.read(),
    });
    if (!ok(put)) throw linkedinError(put, version);
    return value.image;
  }
  /**
   * A video through the Videos API
   * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api):
   * `initializeUpload` with the owner and `fileSizeBytes` answers the video URN and `uploadInstructions`
   * (one per 4 MB part, `firstByte`–`lastByte`); each part is PUT as application/octet-stream and its
   * `ETag` kept; `finalizeUpload` takes the URN, the `uploadToken` and the ETags in order; then
   * `GET /rest/videos/{urn}` is polled until `status` is AVAILABLE (PROCESSING_FAILED fails the target).
   */
  async function uploadVideo(account: AdapterAccount, m: PublishMedia): Promise<string> {
    const bytes = await m.read();
    const json = { ...headers(account), "content-type": "application/json" };
    const init = await callPlatform(endpoint(base, "/rest/videos", { action: "initializeUpload" }), {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        initializeUploadRequest: {
          owner: authorUrn(account.accountId),
          fileSizeBytes: bytes.byteLength,
          uploadCaptions: false,
          uploadThumbnail: false,
        },
      }),
    });
    const value = (
      init.body as {
        value?: {
          video?: string;
          uploadToken?: string;
          uploadInstructions?: { uploadUrl?: string; firstByte?: number; lastByte?: number }[];
        };
      } | null
    )?.value;
    if (!ok(init) || !value?.video || !value.uploadInstructions?.length) throw linkedinError(init, version);
    const etags: string[] = [];
    for (const part of value.uploadInstructions) {
      const first = Number(part.firstByte);
      const last = Number(part.lastByte);
      if (!part.uploadUrl || !Number.isInteger(first) || !Number.isInteger(last) || last < first)
        throw new PlatformError("rejected", "linkedin: an upload instruction without its URL or byte range");
      const put = await callPlatform(part.uploadUrl, {
        method: "PUT",
        headers: {
          authorization: `Bearer ${account.accessToken}`,
          "content-type": "application/octet-stream",
        },
        body: bytes.slice(first, last + 1),
      });
      const etag = put.headers.get("etag");
      if (!ok(put) || !etag) throw linkedinError(put, version);
      etags.push(etag);
    }
    const fin = await callPlatform(endpoint(base, "/rest/videos", { action: "finalizeUpload" }), {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        finalizeUploadRequest: {
          video: value.video,
          uploadToken: value.uploadToken ?? "",
          uploadedPartIds: etags,
        },
      }),
    });
    if (!ok(fin)) throw linkedinError(fin, version);
    const urn = value.video;
    await pollUntil(opts.poll, `linkedin video ${urn}`, async () => {
      const a = await callPlatform(endpoint(base, `/rest/videos/${encodeURIComponent(urn)}`), {
        headers: headers(account),
      });
      if (!ok(a)) throw linkedinError(a, version);
      const status = (a.body as { status?: string } | null)?.status;
      if (status === "PROCESSING_FAILED")
        throw new PlatformError("rejected", "linkedin could not process the video (PROCESSING_FAILED)");
      return status === "AVAILABLE" ? true : null;
    });
    return urn;
  }
  return {
    platform: "linkedin",
    async publish(account, post) {
      const violation = platformMediaViolation("linkedin", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const images: string[] = [];
      for (const m of post.media)
        images.push(m.kind === "video" ? await uploadVideo(account, m) : await uploadImage(account, m));
      const content =
        images.length === 1
          ? { content: { media: { id: images[0] } } }
          : images.length > 1
            ? { content: { multiImage: { images: images.map((id) => ({ id })) } } }
            : {};
      const a = await callPlatform(endpoint(base, "/rest/posts"), {
        method: "POST",
        headers: { ...headers(account), "content-type": "application/json" },
        body: JSON.stringify({
          author: authorUrn(account.accountId),
          commentary: linkedinLittleText(post.text),
          visibility: "PUBLIC",
          distribution: {
            feedDistribution: "MAIN_FEED",
            targetEntities: [],
            thirdPartyDistributionChannels: [],
          },
          ...content,
          lifecycleState: "PUBLISHED",
          isReshareDisabledByAuthor: false,
        }),
      });
      const urn = a.headers.get("x-restli-id");
      if (!ok(a) || !urn) throw linkedinError(a, version);
      return {
        platformPostId: urn,
        url: `https://www.linkedin.com/feed/update/${urn}/`,
        publishedAt: opts.clock.now(),
      };
    },
    /**
     * A cut-off try's post (decision 1497): Find Posts by Authors, `GET /rest/posts?author={URN}&q=author
     * &sortBy=CREATED&count=50`, newest first
     * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api#find-posts-by-authors):
     * the post since `since` (`createdAt`) whose `commentary` is the one publish sends. A member's posts
     * need r_member_social (restricted); without it LinkedIn answers 403 and the cut-off try fails safely.
     */
    async findPublished(account, post) {
      const a = await callPlatform(
        endpoint(base, "/rest/posts", {
          author: authorUrn(account.accountId),
          q: "author",
          sortBy: "CREATED",
          count: "50",
        }),
        { headers: headers(account) },
      );
      if (!ok(a)) throw linkedinError(a, version);
      const want = linkedinLittleText(post.text);
      const elements =
        (a.body as { elements?: { id?: string; commentary?: string; createdAt?: number }[] } | null)
          ?.elements ?? [];
      const hit = elements.find(
        (e) => e.id && e.commentary === want && (e.createdAt ?? Infinity) >= post.since.getTime(),
      );
      if (!hit?.id) return null;
      return {
        platformPostId: hit.id,
        url: `https://www.linkedin.com/feed/update/${hit.id}/`,
        publishedAt: hit.createdAt ? new Date(hit.createdAt) : opts.clock.now(),
      };
    },
    async readMetrics(account, target) {
      const a = await callPlatform(
        endpoint(base, `/rest/socialActions/${encodeURIComponent(target.platformPostId)}`),
        { headers: headers(account) },
      );
      if (!ok(a)) throw linkedinError(a, version);
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
