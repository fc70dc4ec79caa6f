import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, smallint, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
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
    publishedAt: ts("published_at"),
    createdAt: createdAt(),
  },
  (t) => [index("social_posts_org_published_idx").on(t.orgId, t.publishedAt, t.id)],
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
    status: text("status", { enum: ["published", "failed"] }).notNull(),
    error: text("error"),
    publishedAt: ts("published_at"),
    nextStage: smallint("next_stage").notNull().default(1),
    createdAt: createdAt(),
  },
  (t) => [
    index("social_targets_post_idx").on(t.postId),
    index("social_targets_due_idx").on(t.nextStage, t.publishedAt),
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
