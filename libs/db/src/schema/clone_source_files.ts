import { index, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { mediaFiles } from "./media.ts";
import { sites } from "./sites.ts";

/**
 * The template host's library files a cloned site may use: those its copied content carried at clone
 * time (page MDX, layout, collection items), recorded when the clone is made (migration 0011, decision
 * 0610). Nothing else of the host's library is ever the clone's, whatever is added later. A row goes
 * with its site and with the host's file.
 */
export const cloneSourceFiles = pgTable(
  "clone_source_files",
  {
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    key: text("key")
      .notNull()
      .references(() => mediaFiles.key, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ name: "clone_source_files_pk", columns: [t.siteId, t.key] }),
    index("clone_source_files_key_idx").on(t.key),
  ],
);
