import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, smallint, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, tsNoPrecision, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";

/** A connected social account; its access token is encrypted at rest and never returned. */
export const socialAccounts = pgTable(
  "social_accounts",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    accountId: text("account_id").notNull(),
    displayName: text("display_name"),
    tokenCiphertext: text("token_ciphertext").notNull(),
    /** The refresh token, encrypted like the access token; null when the platform gave none. */
    refreshTokenCiphertext: text("refresh_token_ciphertext"),
    /** When the access token expires; null when unknown (a token given directly without expiry). */
    tokenExpiresAt: ts("token_expires_at"),
    /** When the collector last warned that this token (without a refresh token) expires soon. */
    expiryWarnedAt: tsNoPrecision("expiry_warned_at"),
    /**
     * `reconnect_required` once the platform refused a refresh: the account must be connected again;
     * `disconnected` after DELETE (tokens erased, history kept, no longer listed).
     */
    status: text("status", { enum: ["connected", "reconnect_required", "disconnected"] })
      .notNull()
      .default("connected"),
    permissions: text("permissions").array().notNull().default(sql`'{}'::text[]`),
    tier: text("tier"),
    connectedAt: createdAt(),
  },
  (t) => [unique("social_accounts_org_platform_account").on(t.orgId, t.platform, t.accountId)],
);

/** A social post with its per-platform text. */
export const socialPosts = pgTable(
  "social_posts",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    content: text("content").notNull(),
    platformOverrides: jsonb("platform_overrides").notNull().default(sql`'{}'::jsonb`),
    /** Per-platform choices of the user, with their consent (TikTok privacy level, decision 1013). */
    platformOptions: jsonb("platform_options").notNull().default(sql`'{}'::jsonb`),
    /** The social media library files of the post, in order. */
    media: uuid("media").array().notNull().default(sql`'{}'::uuid[]`),
    publishedAt: ts("published_at"),
    /**
     * `scheduled` until its time, `publishing` while a target is not yet ended, then `done`;
     * `cancelled` when cancelled while scheduled (issue 33).
     */
    status: text("status", { enum: ["scheduled", "publishing", "done", "cancelled"] })
      .notNull()
      .default("done"),
    /** When a scheduled post goes out; null: at once. */
    scheduledAt: ts("scheduled_at"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("social_posts_org_published_idx").on(t.orgId, t.publishedAt, t.id),
    index("social_posts_org_scheduled_idx").on(t.orgId, t.scheduledAt, t.id),
  ],
);

/** One publication of a post on one account; `nextStage` is the next snapshot stage due (5 = finished). */
export const socialTargets = pgTable(
  "social_targets",
  {
    id: uuidPk(),
    postId: uuid("post_id")
      .notNull()
      .references(() => socialPosts.id, { onDelete: "cascade" }),
    accountId: uuid("account_id")
      .notNull()
      .references(() => socialAccounts.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    platformPostId: text("platform_post_id"),
    url: text("url"),
    status: text("status", {
      enum: ["scheduled", "publishing", "published", "failed", "cancelled"],
    }).notNull(),
    error: text("error"),
    /** Why a published target has no public URL (an unaudited TikTok app's private post); else null. */
    note: text("note"),
    publishedAt: ts("published_at"),
    nextStage: smallint("next_stage").notNull().default(1),
    /** When the target may be tried (its post's time, or the time a rate limit said); null: ended. */
    nextTryAt: ts("next_try_at"),
    /** Tries begun. */
    tries: integer("tries").notNull().default(0),
    /**
     * Set (committed) before a platform call that may publish, cleared with its outcome: a try found
     * with it set may have reached the platform and is looked up there before any new try.
     */
    tryStartedAt: ts("try_started_at"),
    /** The process publishing it holds it until `lease_until` (renewed while it works). */
    leaseToken: uuid("lease_token"),
    leaseUntil: ts("lease_until"),
    /** The end of the rate-limit window that began with the first refusal. */
    retryUntil: ts("retry_until"),
    /** When it ended (published, failed or cancelled). */
    endedAt: ts("ended_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("social_targets_post_idx").on(t.postId),
    index("social_targets_due_idx").on(t.nextStage, t.publishedAt),
    index("social_targets_open_idx").on(t.nextTryAt).where(sql`${t.status} IN ('scheduled', 'publishing')`),
  ],
);

/** An engagement snapshot of a target at one stage (1h, 24h, 72h, 7d); null metrics mean "cannot know". */
export const socialSnapshots = pgTable(
  "social_snapshots",
  {
    id: uuidPk(),
    targetId: uuid("target_id")
      .notNull()
      .references(() => socialTargets.id, { onDelete: "cascade" }),
    stage: smallint("stage").notNull(),
    views: integer("views"),
    likes: integer("likes"),
    comments: integer("comments"),
    shares: integer("shares"),
    saves: integer("saves"),
    extra: jsonb("extra").notNull().default(sql`'{}'::jsonb`),
    capturedAt: ts("captured_at").notNull(),
  },
  (t) => [unique("social_snapshots_target_stage").on(t.targetId, t.stage)],
);

/**
 * A file of an organization's social media library: its own upload or generated image under
 * `social-media/<org_id>/`, or a site library file registered by its path (`key` then under
 * `site-media/`, counted once, by the site). Listed once `status` is `ready`.
 */
export const socialMedia = pgTable(
  "social_media",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    kind: text("kind", { enum: ["image", "video"] }).notNull(),
    contentType: text("content_type").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    width: integer("width"),
    height: integer("height"),
    /** `derived`: a JPEG made from a PNG/WebP for a platform that takes JPEG only; not listed. */
    source: text("source", { enum: ["upload", "site", "generated", "derived"] }).notNull(),
    status: text("status", { enum: ["prepared", "ready", "rejected"] }).notNull(),
    /** A prepared upload not landed by then is never listed. */
    expiresAt: ts("expires_at"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("social_media_org_key").on(t.orgId, t.key),
    index("social_media_org_created_idx").on(t.orgId, t.createdAt, t.id),
  ],
);

/** An OAuth authorization in flight: its `state`, the PKCE verifier, and where to send the user after. */
export const socialOauthStates = pgTable("social_oauth_states", {
  state: text("state").primaryKey(),
  orgId: uuid("org_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" }),
  platform: text("platform").notNull(),
  codeVerifier: text("code_verifier"),
  redirectUri: text("redirect_uri"),
  /** The user (API key's user) who started it: only they may confirm it (decision 1016). */
  userId: uuid("user_id"),
  /** The tokens the callback obtained, encrypted, waiting for the starting user's confirmation. */
  pendingCiphertext: text("pending_ciphertext"),
  /** SHA-256 of the confirmation token the callback handed to the browser. */
  confirmHash: text("confirm_hash"),
  confirmedAt: tsNoPrecision("confirmed_at"),
  expiresAt: ts("expires_at").notNull(),
  usedAt: ts("used_at"),
  createdAt: createdAt(),
});

/** An AI image generation request: charged when recorded, refunded once if it fails. */
export const imageGenerations = pgTable(
  "image_generations",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    prompt: text("prompt").notNull(),
    n: smallint("n").notNull(),
    size: text("size").notNull(),
    credits: integer("credits").notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] })
      .notNull()
      .default("pending"),
    error: text("error"),
    createdAt: createdAt(),
  },
  (t) => [index("image_generations_org_idx").on(t.orgId)],
);
