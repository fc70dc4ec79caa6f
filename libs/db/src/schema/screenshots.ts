import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  real,
  text,
  unique,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, ts, tsNoPrecision, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";
import { sites } from "./sites.ts";
import { socialMedia } from "./social.ts";

/** A screenshot project: one per site and normalized source URL, with its capture settings and variants. */
export const screenshotProjects = pgTable(
  "screenshot_projects",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    sourceUrl: text("source_url").notNull(),
    viewportWidth: integer("viewport_width").notNull().default(1440),
    viewportHeight: integer("viewport_height").notNull().default(900),
    deviceScaleFactor: real("device_scale_factor").notNull().default(1),
    fullPage: boolean("full_page").notNull().default(false),
    /** The other capture options a request named (hideSelectors, waitForSelector, delayMs, blockAds, hideCookieBanners). */
    captureOptions: jsonb("capture_options").notNull().default(sql`'{}'::jsonb`),
    /** { light?: Capture, dark?: Capture, first?: "light" | "dark" } */
    variants: jsonb("variants").notNull().default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [unique("screenshot_projects_site_url").on(t.siteId, t.sourceUrl)],
);

/**
 * A render of the render farm: a screenshot still (kind `still`, of a site) or a device clip (kind
 * `clip`, of an organization's social library: no site, decision 1220); pending, done or failed; job
 * id = render id.
 */
export const screenshotRenders = pgTable(
  "screenshot_renders",
  {
    id: uuidPk(),
    /** Null only for a clip (a CHECK says so). */
    siteId: uuid("site_id").references(() => sites.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["still", "clip"] })
      .notNull()
      .default("still"),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: uuid("project_id").references(() => screenshotProjects.id, { onDelete: "set null" }),
    sourceUrl: text("source_url").notNull(),
    status: text("status", { enum: ["pending", "done", "failed"] })
      .notNull()
      .default("pending"),
    options: jsonb("options").notNull(),
    stage: text("stage"),
    credits: integer("credits").notNull(),
    /** A still's library image; a clip's video (in the social library). */
    imageKey: text("image_key"),
    /** A clip's poster (its first frame, JPEG). */
    posterKey: text("poster_key"),
    /** A clip's entry in the social media library. */
    mediaId: uuid("media_id").references(() => socialMedia.id, { onDelete: "set null" }),
    width: integer("width"),
    height: integer("height"),
    error: text("error"),
    warnings: jsonb("warnings").notNull().default(sql`'[]'::jsonb`),
    attempts: integer("attempts").notNull().default(0),
    /**
     * When the render was admitted to the queue (0470): at most RENDER_ORG_CONCURRENCY pending renders of
     * an organization have one; the others wait, unqueued, for one of those to end.
     */
    dispatchedAt: ts("dispatched_at"),
    /**
     * The try that owns the render now (a fresh UUID per try begun, decision 1440): only it completes,
     * fails or hands the render back; a late host holding an older token removes what it wrote.
     */
    tryToken: uuid("try_token"),
    /** Beaten by the owning try while it runs: the sweeper re-queues no render a live host is running. */
    heartbeatAt: tsNoPrecision("heartbeat_at"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    finishedAt: ts("finished_at"),
  },
  (t) => [
    index("screenshot_renders_site_idx").on(t.siteId, t.createdAt),
    index("screenshot_renders_status_idx").on(t.status, t.updatedAt),
    index("screenshot_renders_org_pending_idx").on(t.orgId, t.createdAt).where(sql`${t.status} = 'pending'`),
    check("screenshot_renders_kind_check", sql`${t.kind} in ('still', 'clip')`),
    check("screenshot_renders_site_of_still", sql`${t.kind} = 'clip' OR ${t.siteId} IS NOT NULL`),
  ],
);

/** A one-hour sign-in link for a login-gated page. */
export const screenshotLoginLinks = pgTable("screenshot_login_links", {
  id: uuidPk(),
  siteId: uuid("site_id")
    .notNull()
    .references(() => sites.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull().unique(),
  sourceUrl: text("source_url").notNull(),
  interactive: boolean("interactive").notNull(),
  expiresAt: ts("expires_at").notNull(),
  usedAt: ts("used_at"),
  createdAt: createdAt(),
});

/** The encrypted browser session (cookies, local storage) of a site, inherited by its screenshots. */
export const siteBrowserSessions = pgTable("site_browser_sessions", {
  siteId: uuid("site_id")
    .primaryKey()
    .references(() => sites.id, { onDelete: "cascade" }),
  ciphertext: text("ciphertext").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
