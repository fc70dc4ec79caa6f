import { bigint, bigserial, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { sites } from "./sites.ts";

/** A file of a site's media library; listed only once its bytes landed and passed the type check. */
export const mediaFiles = pgTable(
  "media_files",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    width: integer("width"),
    height: integer("height"),
    alt: text("alt"),
    source: text("source", { enum: ["upload", "import", "screenshot", "preview"] }).notNull(),
    etag: text("etag"),
    createdAt: createdAt(),
  },
  (t) => [index("media_files_site_created_idx").on(t.siteId, t.createdAt, t.id)],
);

/**
 * A counter per site that moves whenever any of its media_files rows is inserted, changed or deleted —
 * by triggers, whatever writes (migration 0008). A cached page of the library is good while it matches
 * (decision 0810). No row yet reads as version 0.
 */
export const siteMediaVersions = pgTable("site_media_versions", {
  siteId: uuid("site_id")
    .primaryKey()
    .references(() => sites.id, { onDelete: "cascade" }),
  version: bigint("version", { mode: "number" }).notNull(),
});

/** A prepared signed upload: counted against the caps at preparation, finalized when the bytes land. */
export const mediaUploads = pgTable(
  "media_uploads",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    status: text("status", { enum: ["prepared", "landed", "rejected", "expired"] })
      .notNull()
      .default("prepared"),
    expiresAt: ts("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("media_uploads_site_created_idx").on(t.siteId, t.createdAt)],
);

/** Events counted against the rolling daily caps of a site (uploads, failed fetches). */
export const usageEvents = pgTable(
  "usage_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["upload", "fetch_failure"] }).notNull(),
    createdAt: createdAt(),
    /**
     * Set while the event is a reservation of work in flight (an import's fetch attempt and upload
     * slot): it counts until then, and is confirmed (null) or deleted when the work ends; one left by a
     * crashed process stops counting when it lapses.
     */
    reservedUntil: ts("reserved_until"),
  },
  (t) => [index("usage_events_site_kind_created_idx").on(t.siteId, t.kind, t.createdAt)],
);
