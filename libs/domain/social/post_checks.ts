import { AppError, isUuid, validationError } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import { isSocialPlatform } from "./accounts.ts";
import { jpegVariant, loadPublishMedia } from "./media.ts";
import { platformMediaViolation, publishedTypeOn } from "./media_rules.ts";
import type { CreatePostBody } from "./models.ts";
import type { PublishMedia, SocialPlatform } from "./platform.ts";
import { postTextViolations } from "./text_rules.ts";
import { assertPostVideos } from "./video_rules.ts";

/** A post's input once its shape's own rules passed (content, overrides, account ids, media ids). */
export type CheckedPostInput = {
  content: string;
  overrides: Record<string, string>;
  accountIds: string[];
  media: string[];
};

// The shape is CreatePostBody's; these are the rules a schema does not say.
/** Checks what a post's model cannot: non-empty texts, known platforms, ids, no file listed twice. */
export function checkPostInput(input: CreatePostBody): CheckedPostInput {
  if (input.content.trim() === "") throw validationError("content", "required");
  const overrides = input.platformOverrides ?? {};
  for (const [k, v] of Object.entries(overrides)) {
    if (!isSocialPlatform(k)) throw validationError(`platformOverrides.${k}`, "unknown platform");
    if (v.trim() === "") throw validationError(`platformOverrides.${k}`, "must be a non-empty string");
  }
  for (const a of input.accounts) if (!isUuid(a)) throw validationError("accounts", "must be account ids");
  const media = input.media ?? [];
  if (new Set(media).size !== media.length) throw validationError("media", "lists a file twice");
  return { content: input.content, overrides, accountIds: [...new Set(input.accounts)], media };
}

/** At most this far ahead a post may be scheduled (CONTRACT "Social posts on their own clock"). */
export const MAX_SCHEDULE_AHEAD_MS = 365 * 86_400_000;

/** ISO 8601 date and time with an explicit offset (RFC 3339 §5.6 date-time: `Z` or ±hh:mm). */
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** `scheduledAt` as a date: ISO 8601 with offset, later than `now`, at most 365 days ahead; else 400. */
export function parseScheduledAt(value: string, now: Date): Date {
  const at = WITH_OFFSET.test(value) ? new Date(value) : null;
  if (!at || Number.isNaN(at.getTime()))
    throw validationError(
      "scheduledAt",
      "must be an ISO 8601 date and time with an offset (2026-12-03T09:00:00+01:00)",
    );
  if (at.getTime() <= now.getTime()) throw validationError("scheduledAt", "must be later than now");
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS)
    throw validationError("scheduledAt", "must be at most 365 days ahead");
  return at;
}

/** Throws 400 naming each platform whose text limit the post's text (or its override) exceeds. */
export function checkTexts(platforms: SocialPlatform[], content: string, overrides: Record<string, string>) {
  const tooLong = postTextViolations(platforms, content, overrides);
  if (tooLong.length > 0)
    throw new AppError(
      "VALIDATION_ERROR",
      `${tooLong.map((t) => `${t.field}: ${t.message}`).join("; ")}; nothing was published`,
      tooLong,
    );
}

/** Loads the post's files and throws 400 naming each platform that does not take the combination. */
export async function checkMedia(
  ctx: MediaContext,
  orgId: string,
  platforms: SocialPlatform[],
  mediaIds: string[],
): Promise<(PublishMedia & { id: string })[]> {
  const media = await loadPublishMedia(ctx, orgId, mediaIds);
  const broken = platforms.flatMap((platform) => {
    const why = platformMediaViolation(platform, media, { convert: true });
    return why ? [{ field: `media (${platform})`, message: why }] : [];
  });
  if (broken.length > 0)
    throw new AppError(
      "VALIDATION_ERROR",
      `media: ${broken.map((b) => b.message).join("; ")}; nothing was published`,
      broken,
    );
  // Each video against each target platform's documented video rules, before any upload (issue 33).
  await assertPostVideos(platforms, media);
  return media;
}

/**
 * One platform's files: a JPEG made once per file where the platform takes JPEG only (decision 1003).
 */
export async function mediaForPlatform(
  ctx: MediaContext,
  orgId: string,
  platform: SocialPlatform,
  media: (PublishMedia & { id: string })[],
): Promise<PublishMedia[]> {
  return Promise.all(
    media.map((m) =>
      m.kind !== "image" || publishedTypeOn(platform, m.contentType) === m.contentType
        ? Promise.resolve(m)
        : jpegVariant(ctx, orgId, m),
    ),
  );
}
