import { type Context, type Principal, validationError } from "@site/domain/core";
import type { CreatePostBody } from "./models.ts";
import type { SocialPlatform } from "./platform.ts";

/**
 * A TikTok post's privacy as recorded with the post (decisions 1013, 1031): the user's choice with their
 * consent, or, on an app TikTok has not audited and without a choice in the request, SELF_ONLY (the only
 * level TikTok lets such an app post) with `consent: null` and the reason.
 */
export type RecordedTikTok =
  | { privacyLevel: string; consent: true; consentedAt: string; consentedBy: string }
  | { privacyLevel: "SELF_ONLY"; consent: null; consentedAt: null; consentedBy: null; reason: string };

/** The per-platform choices recorded with a post. */
export type RecordedOptions = { tiktok?: RecordedTikTok };

/** Why an unaudited app's TikTok post without a privacy choice goes out SELF_ONLY. */
export const TIKTOK_UNAUDITED_REASON = "unaudited app: private only";

/**
 * The per-platform choices a post must carry, checked before anything is published, and recorded with
 * who consented when (decisions 1013, 1031). TikTok, audited app (SOCIAL_TIKTOK_AUDITED): the user's
 * privacy level (no default, TikTok's UX rules,
 * https://developers.tiktok.com/doc/content-sharing-guidelines#step_2_metadata) and their consent are
 * required. Unaudited app (the default): TikTok restricts every post to private viewing
 * (https://developers.tiktok.com/doc/content-posting-api-get-started#step_3), so there is nothing to
 * choose: `platformOptions.tiktok` is optional and the post goes out SELF_ONLY; a choice given is still
 * checked (SELF_ONLY, consent true) and recorded.
 */
export function recordedOptions(
  ctx: Context,
  principal: Principal,
  platforms: SocialPlatform[],
  input: CreatePostBody,
): RecordedOptions {
  const out: RecordedOptions = {};
  const tiktok = input.platformOptions?.tiktok;
  if (!platforms.includes("tiktok")) return out;
  const audited = ctx.config.social.tiktokAudited;
  if (!tiktok) {
    if (audited)
      throw validationError(
        "platformOptions.tiktok",
        "a TikTok target needs the privacy level the user chose ({privacyLevel, consent: true}); nothing was published",
      );
    out.tiktok = {
      privacyLevel: "SELF_ONLY",
      consent: null,
      consentedAt: null,
      consentedBy: null,
      reason: TIKTOK_UNAUDITED_REASON,
    };
    return out;
  }
  if (tiktok.consent !== true)
    throw validationError(
      "platformOptions.tiktok.consent",
      "the user's consent to TikTok's Music Usage Confirmation is required; nothing was published",
    );
  if (!audited && tiktok.privacyLevel !== "SELF_ONLY")
    throw validationError(
      "platformOptions.tiktok.privacyLevel",
      "this app is not audited by TikTok (SOCIAL_TIKTOK_AUDITED): its posts can only be SELF_ONLY; nothing was published",
    );
  out.tiktok = {
    privacyLevel: tiktok.privacyLevel,
    consent: true,
    consentedAt: ctx.clock.now().toISOString(),
    consentedBy: principal.userId,
  };
  return out;
}
