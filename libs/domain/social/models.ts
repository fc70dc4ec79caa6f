import { type Static, type TLiteral, Type } from "@sinclair/typebox";
import { ListQuery, named, pageOf } from "@site/domain/core";
import { SOCIAL_PLATFORMS } from "./platform.ts";

// One model per shape: the API route and the TypeScript type both read these.

/** A literal per value of a constant list, typed as a tuple so the union keeps each literal. */
function literals<T extends readonly string[]>(values: T) {
  return values.map((v) => Type.Literal(v)) as unknown as { -readonly [K in keyof T]: TLiteral<T[K]> };
}

/** A platform identifier of the contract. */
export const Platform = Type.Union(literals(SOCIAL_PLATFORMS), {
  description: "instagram, threads, x, linkedin, reddit or tiktok",
});

/** The body of POST /api/v1/social/accounts. */
export const ConnectAccountBody = Type.Object({
  platform: Platform,
  accountId: Type.String({ minLength: 1, maxLength: 200 }),
  displayName: Type.Optional(Type.String({ maxLength: 200 })),
  accessToken: Type.String({
    minLength: 1,
    maxLength: 8192,
    description: "stored encrypted, never returned",
  }),
  permissions: Type.Optional(
    Type.Array(Type.String({ maxLength: 200 }), {
      description: "granted permissions, e.g. instagram_manage_insights, threads_manage_insights",
    }),
  ),
  tier: Type.Optional(
    Type.Union([Type.Literal("free"), Type.Literal("basic"), Type.Literal("pro")], {
      description: "API tier (x); free reads no metrics. Default free for x.",
    }),
  ),
  refreshToken: Type.Optional(
    Type.String({ minLength: 1, maxLength: 8192, description: "stored encrypted, never returned" }),
  ),
  expiresAt: Type.Optional(
    Type.String({
      format: "date-time",
      description:
        "when the access token expires (ISO 8601); it is renewed before then with the refresh token",
    }),
  ),
});
/** An account connection that passed its model. */
export type ConnectAccountBody = Static<typeof ConnectAccountBody>;

/** A connected account as the API answers it (never its token). */
export const SocialAccountView = Type.Object({
  id: Type.String({ format: "uuid" }),
  platform: Platform,
  accountId: Type.String({ description: "the platform's own account id" }),
  displayName: Type.Union([Type.String(), Type.Null()]),
  permissions: Type.Array(Type.String()),
  tier: Type.Union([Type.String(), Type.Null()]),
  connectedAt: Type.String(),
  status: Type.Union([Type.Literal("connected"), Type.Literal("reconnect_required")], {
    description: "reconnect_required: the platform refused to renew the token; connect the account again",
  }),
  expiresAt: Type.Union([Type.String({ description: "when the access token expires" }), Type.Null()]),
});
/** A connected account as the API answers it. */
export type SocialAccountView = Static<typeof SocialAccountView>;

/** TikTok's privacy levels, as creator_info/query lists them. */
export const TIKTOK_PRIVACY_LEVELS = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
] as const;

/** The per-platform choices of a post (decision 1013). */
export const PlatformOptions = Type.Object(
  {
    tiktok: Type.Optional(
      Type.Object({
        privacyLevel: Type.Union(literals(TIKTOK_PRIVACY_LEVELS), {
          description:
            "chosen by the user among the account's creator_info privacy_level_options (no default) when the app is audited (SOCIAL_TIKTOK_AUDITED); an app TikTok has not audited may only use SELF_ONLY",
        }),
        consent: Type.Boolean({
          description:
            "true: the user agreed to TikTok's Music Usage Confirmation for this post; must be true when given, recorded with the post",
        }),
      }),
    ),
  },
  {
    description:
      'per-platform choices. `tiktok`: required for a TikTok target when the app is audited (SOCIAL_TIKTOK_AUDITED); on an unaudited app (the default) optional: without it the post goes out SELF_ONLY, the only level TikTok allows such an app, recorded as {privacyLevel: SELF_ONLY, consent: null, reason: "unaudited app: private only"}',
  },
);
/** Per-platform choices of a post. */
export type PlatformOptions = Static<typeof PlatformOptions>;

/** The body of POST /api/v1/social/posts. */
export const CreatePostBody = Type.Object({
  content: Type.String({ minLength: 1, maxLength: 65_536 }),
  platformOverrides: Type.Optional(
    Type.Record(Type.String(), Type.String(), { description: "platform -> text" }),
  ),
  accounts: Type.Array(Type.String(), {
    minItems: 1,
    maxItems: 50,
    description: "ids of connected accounts",
  }),
  media: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 50,
      description:
        "ids of social media library files, in order; each target's platform must accept the combination (else 400, nothing published)",
    }),
  ),
  platformOptions: Type.Optional(PlatformOptions),
  scheduledAt: Type.Optional(
    Type.String({
      maxLength: 40,
      description:
        "ISO 8601 with offset (2026-12-03T09:00:00+01:00): publish then instead of now; later than now, at most 365 days ahead",
    }),
  ),
});
/** A post creation that passed its model. */
export type CreatePostBody = Static<typeof CreatePostBody>;

/** The body of PATCH /api/v1/social/posts/<id> (a scheduled post only). */
export const UpdatePostBody = Type.Object({
  content: Type.Optional(CreatePostBody.properties.content),
  platformOverrides: CreatePostBody.properties.platformOverrides,
  accounts: Type.Optional(CreatePostBody.properties.accounts),
  media: CreatePostBody.properties.media,
  platformOptions: CreatePostBody.properties.platformOptions,
  scheduledAt: CreatePostBody.properties.scheduledAt,
});
/** A post change that passed its model. */
export type UpdatePostBody = Static<typeof UpdatePostBody>;

/** Post statuses: scheduled until its time, publishing until every target ended, then done. */
export const POST_STATUSES = ["scheduled", "publishing", "done", "cancelled"] as const;

/** The query of GET /api/v1/social/posts (the calendar). */
export const SocialPostListQuery = Type.Object({
  ...ListQuery.properties,
  status: Type.Optional(Type.Union(literals(POST_STATUSES))),
  from: Type.Optional(
    Type.String({
      maxLength: 40,
      description: "ISO 8601: posts at or after (scheduledAt, else publishedAt)",
    }),
  ),
  to: Type.Optional(Type.String({ maxLength: 40, description: "ISO 8601: posts before" })),
});
/** The query of the calendar. */
export type SocialPostListQuery = Static<typeof SocialPostListQuery>;

const Metric = Type.Union([
  Type.Integer({
    description: "null when the platform does not expose it or the token cannot read it (never 0 then)",
  }),
  Type.Null(),
]);

/** A snapshot as the API answers it. */
export const SnapshotView = Type.Object({
  stage: Type.Integer({ description: "1 = ~1 h, 2 = ~24 h, 3 = ~72 h, 4 = ~7 d after publication" }),
  views: Metric,
  likes: Metric,
  comments: Metric,
  shares: Metric,
  saves: Metric,
  extra: Type.Record(Type.String(), Type.Unknown(), {
    description: "further metrics (reach, quotes, upvoteRatio…) and `unavailable`: metric → why it is null",
  }),
  capturedAt: Type.String({ description: "ISO 8601 UTC" }),
});
/** A snapshot as the API answers it. */
export type SnapshotView = Static<typeof SnapshotView>;

/** One publication of a post as the API answers it. */
export const SocialTargetView = Type.Object({
  platform: Platform,
  accountId: Type.String({ description: "id of the connected account" }),
  url: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union(
    [
      Type.Literal("scheduled"),
      Type.Literal("publishing"),
      Type.Literal("published"),
      Type.Literal("failed"),
      Type.Literal("cancelled"),
    ],
    { description: "publishing: still working (a video being processed, a rate-limit wait)" },
  ),
  error: Type.Union([Type.String({ description: "why publishing failed" }), Type.Null()]),
  note: Type.Optional(
    Type.Union([
      Type.String({
        description:
          "why a published target has no public URL (an unaudited TikTok app posts privately, SELF_ONLY)",
      }),
      Type.Null(),
    ]),
  ),
});
/** One publication of a post as the API answers it. */
export type SocialTargetView = Static<typeof SocialTargetView>;

/** A post as the API answers it. */
export const SocialPostView = Type.Object({
  postId: Type.String({ format: "uuid" }),
  content: Type.String(),
  platformOverrides: Type.Record(Type.String(), Type.String()),
  media: Type.Array(Type.String(), { description: "ids of the post's social media files, in order" }),
  platformOptions: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "the per-platform choices as recorded: tiktok {privacyLevel, consent: true, consentedAt, consentedBy (user id)}, or on an unaudited app without a choice {privacyLevel: SELF_ONLY, consent: null, consentedAt: null, consentedBy: null, reason}",
  }),
  publishedAt: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union(literals(POST_STATUSES)),
  scheduledAt: Type.Union([Type.String({ description: "ISO 8601 UTC" }), Type.Null()]),
  warnings: Type.Array(
    Type.Object({
      code: Type.Literal("reconnect_required"),
      accountId: Type.String(),
      platform: Platform,
      message: Type.String(),
    }),
    { description: "what may stop a scheduled post at its time (an account to reconnect)" },
  ),
  targets: Type.Array(SocialTargetView),
});
/** A post as the API answers it. */
export type SocialPostView = Static<typeof SocialPostView>;

/** One post: the answer of creating it (POST /api/v1/social/posts, create_social_post). */
export const SocialPostAnswer = named("SocialPostAnswer", Type.Object({ post: SocialPostView }));

/** A page of social posts (GET /api/v1/social/posts, list_social_posts). */
export const SocialPostPage = named("SocialPostPage", pageOf("posts", SocialPostView));

/** A post with each target's full snapshot series as `metrics`. */
export const SocialPostWithMetrics = Type.Object({
  ...SocialPostView.properties,
  targets: Type.Array(Type.Object({ ...SocialTargetView.properties, metrics: Type.Array(SnapshotView) })),
});
/** A post with each target's full snapshot series. */
export type SocialPostWithMetrics = Static<typeof SocialPostWithMetrics>;

/** One post with its metrics: the answer of GET /api/v1/social/posts/<id> (get_social_post). */
export const SocialPostDetail = named("SocialPostDetail", Type.Object({ post: SocialPostWithMetrics }));

/** A post of the performance report (the spec's "social performance post"). */
export const PerformancePost = Type.Object({
  postId: Type.String(),
  content: Type.String(),
  platformOverrides: Type.Record(Type.String(), Type.String()),
  publishedAt: Type.String(),
  targets: Type.Array(
    Type.Object({
      platform: Platform,
      accountId: Type.String(),
      url: Type.String(),
      first: Type.Union([SnapshotView, Type.Null()]),
      latest: Type.Union([SnapshotView, Type.Null()]),
    }),
  ),
});
/** A post of the performance report. */
export type PerformancePost = Static<typeof PerformancePost>;

/** The performance report: GET /api/v1/social/performance, get_social_performance. */
export const PerformanceReport = named(
  "PerformanceReport",
  Type.Object({ posts: Type.Array(PerformancePost) }),
);
/** The performance report. */
export type PerformanceReport = Static<typeof PerformanceReport>;

/** The report's bounds: days default 30 max 90, limit default 50 max 100, offset from 0. */
export const PERFORMANCE_LIMITS = {
  days: { default: 30, min: 1, max: 90 },
  limit: { default: 50, min: 1, max: 100 },
  offset: { default: 0, min: 0, max: 1_000_000 },
} as const;

/** The report's query (spec: non-numeric or out of range is 400 VALIDATION_ERROR). */
export const PerformanceQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      ...bounds("days"),
      description:
        "integer look-back window in days, 1..90, default 30; non-numeric or over 90: 400 VALIDATION_ERROR",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      ...bounds("limit"),
      description: "integer max posts, 1..100, default 50; non-numeric or over 100: 400 VALIDATION_ERROR",
    }),
  ),
  offset: Type.Optional(
    Type.Integer({
      ...bounds("offset"),
      description: "integer pagination offset, default 0; non-numeric: 400 VALIDATION_ERROR",
    }),
  ),
});
/** A checked report query. */
export type PerformanceQuery = Static<typeof PerformanceQuery>;

function bounds(field: keyof typeof PERFORMANCE_LIMITS) {
  const b = PERFORMANCE_LIMITS[field];
  return { minimum: b.min, maximum: b.max, default: b.default };
}

/** A file of the social media library as the API answers it. */
export const SocialMediaView = Type.Object({
  id: Type.String({ format: "uuid" }),
  kind: Type.Union([Type.Literal("image"), Type.Literal("video")]),
  contentType: Type.String(),
  size: Type.Integer(),
  width: Type.Union([Type.Integer(), Type.Null()]),
  height: Type.Union([Type.Integer(), Type.Null()]),
  url: Type.String({ description: "the bare /api/media/<key> path" }),
  thumbnailUrl: Type.String({
    description: "the same path with a short-lived member grant (k), signed at read",
  }),
  createdAt: Type.String(),
});
/** A file of the social media library as the API answers it. */
export type SocialMediaView = Static<typeof SocialMediaView>;

/** A page of the social media library (GET /api/v1/social/media, list_social_media). */
export const SocialMediaPage = named("SocialMediaPage", pageOf("media", SocialMediaView));

/** One file of the social media library (POST /api/v1/social/media, add_social_media). */
export const SocialMediaAnswer = named("SocialMediaAnswer", Type.Object({ media: SocialMediaView }));

/** The delete_social_media tool's answer (REST answers 204 with no body). */
export const SocialMediaDeleted = named(
  "SocialMediaDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    mediaId: Type.String({ format: "uuid", description: "the social library file that is gone" }),
  }),
);

/** Generated images and what they cost (POST /api/v1/social/media/generate, generate_social_images). */
export const GeneratedSocialImages = named(
  "GeneratedSocialImages",
  Type.Object({
    media: Type.Array(SocialMediaView),
    creditsCharged: Type.Integer({ description: "AI credits debited for these images" }),
  }),
);

/** The delete_social_post tool's answer (REST answers 204 with no body). */
export const SocialPostDeleted = named(
  "SocialPostDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    postId: Type.String({ format: "uuid", description: "the scheduled or cancelled post that is gone" }),
  }),
);

/** The body of POST /api/v1/social/media/upload. */
export const SocialUploadBody = Type.Object({
  contentType: Type.String({
    maxLength: 100,
    description:
      "image/jpeg, image/png, image/webp, image/gif (up to 10485760 bytes) or video/mp4 (up to SOCIAL_VIDEO_MAX_BYTES)",
  }),
  size: Type.Integer({ minimum: 1, description: "bytes of the file" }),
  name: Type.Optional(Type.String({ maxLength: 200, description: "a name to lead the stored file's name" })),
});
/** A social upload preparation that passed its model. */
export type SocialUploadBody = Static<typeof SocialUploadBody>;

/** The body of POST /api/v1/social/media. */
export const RegisterSocialMediaBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: "a /api/media/<key> path of a site library file of the organization",
  }),
});
/** A registration that passed its model. */
export type RegisterSocialMediaBody = Static<typeof RegisterSocialMediaBody>;

/** The body of POST /api/v1/social/accounts/connect. */
export const ConnectStartBody = Type.Object({
  platform: Platform,
  redirectUri: Type.Optional(
    Type.String({
      maxLength: 2048,
      description:
        "where the callback sends the user afterwards, on an origin of SOCIAL_REDIRECT_ORIGINS (default PUBLIC_BASE_URL's; else 400), with ?state=<state>&confirm=<token> or ?error=<code>; without it the callback answers JSON",
    }),
  ),
});
/** A connect start that passed its model. */
export type ConnectStartBody = Static<typeof ConnectStartBody>;

/** The body of POST /api/v1/social/accounts/connect/confirm. */
export const ConnectConfirmBody = Type.Object({
  state: Type.String({ minLength: 1, maxLength: 200, description: "the connect call's state" }),
  confirm: Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      "the one-time confirmation the callback handed to the browser (?confirm= or pending.confirm)",
  }),
});
/** A confirmation that passed its model. */
export type ConnectConfirmBody = Static<typeof ConnectConfirmBody>;

/** A connection granted by the platform, waiting for the starting user's confirmation. */
export const PendingConnectionView = Type.Object({
  state: Type.String(),
  confirm: Type.String({ description: "one-time; POST it to /api/v1/social/accounts/connect/confirm" }),
  platform: Platform,
  accountId: Type.String({ description: "the platform's id of the account that was authorized" }),
  displayName: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String({ description: "the confirmation must come before this (10 minutes)" }),
});

/** Image sizes the OpenAI images API accepts (gpt-image-1: 1024x1024, 1536x1024, 1024x1536, auto; DALL·E: the others). */
export const IMAGE_SIZES = [
  "1024x1024",
  "1536x1024",
  "1024x1536",
  "auto",
  "256x256",
  "512x512",
  "1792x1024",
  "1024x1792",
] as const;

/** The body of POST /api/v1/social/media/generate. */
export const GenerateImageBody = Type.Object({
  prompt: Type.String({ minLength: 1, maxLength: 4000, description: "what to draw" }),
  size: Type.Optional(Type.Union(literals(IMAGE_SIZES), { default: "1024x1024" })),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 4, default: 1, description: "images to make, 1..4" })),
});
/** A generation request that passed its model. */
export type GenerateImageBody = Static<typeof GenerateImageBody>;

/** A TikTok creator's posting options (GET /api/v1/social/accounts/{id}/creator-info). */
export const CreatorInfoView = Type.Object({
  creatorUsername: Type.Union([Type.String(), Type.Null()]),
  creatorNickname: Type.Union([Type.String(), Type.Null()]),
  privacyLevelOptions: Type.Array(Type.String(), { description: "as TikTok lists them for this creator" }),
  selectablePrivacyLevels: Type.Array(Type.String(), {
    description: "the ones this app may post with now (SELF_ONLY only until SOCIAL_TIKTOK_AUDITED)",
  }),
  commentDisabled: Type.Boolean(),
  duetDisabled: Type.Boolean(),
  stitchDisabled: Type.Boolean(),
  maxVideoPostDurationSec: Type.Union([Type.Integer(), Type.Null()]),
});

/** A TikTok account's posting options (GET …/accounts/<id>/creator-info, get_tiktok_creator_info). */
export const CreatorInfoAnswer = named("CreatorInfoAnswer", Type.Object({ creatorInfo: CreatorInfoView }));

/** The answer of GET /api/v1/social/accounts. */
export const SocialAccountList = named(
  "SocialAccountList",
  Type.Object({ accounts: Type.Array(SocialAccountView) }),
);
/** The answer of POST /api/v1/social/accounts (and of confirming a connection). */
export const SocialAccountAnswer = named("SocialAccountAnswer", Type.Object({ account: SocialAccountView }));
/** The answer of POST /api/v1/social/accounts/connect. */
export const ConnectStarted = named(
  "ConnectStarted",
  Type.Object({
    authorizeUrl: Type.String({ description: "send the user here to authorize" }),
    state: Type.String({
      description: "single use, valid 10 minutes, bound to this organization and this key's user",
    }),
  }),
);
/** The disconnect_social_account tool's answer (REST answers 204 with no body). */
export const SocialAccountDisconnected = named(
  "SocialAccountDisconnected",
  Type.Object({
    disconnected: Type.Literal(true),
    accountId: Type.String({ format: "uuid", description: "the account whose tokens are erased" }),
  }),
);
