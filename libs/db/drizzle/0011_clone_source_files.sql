CREATE TABLE "clone_source_files" (
	"site_id" uuid NOT NULL,
	"key" text NOT NULL,
	CONSTRAINT "clone_source_files_pk" PRIMARY KEY("site_id","key")
);
--> statement-breakpoint
ALTER TABLE "clone_source_files" ADD CONSTRAINT "clone_source_files_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clone_source_files" ADD CONSTRAINT "clone_source_files_key_media_files_key_fk" FOREIGN KEY ("key") REFERENCES "public"."media_files"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "clone_source_files_key_idx" ON "clone_source_files" USING btree ("key");--> statement-breakpoint
-- Clones made before this table: a host file is the clone's when both the clone's content and the
-- host's content name its key now (decision 0610). A file the clone named that the host's content never
-- carried is not granted; a reference written in an encoded form is not found here and stays unsigned.
INSERT INTO "clone_source_files" ("site_id", "key")
SELECT DISTINCT s.id, m.key
FROM "sites" s
JOIN "media_files" m ON m.site_id = s.cloned_from_site_id
WHERE (
    EXISTS (SELECT 1 FROM "pages" p WHERE p.site_id = s.id AND strpos(p.content, m.key) > 0)
    OR EXISTS (SELECT 1 FROM "site_layouts" l WHERE l.site_id = s.id AND strpos(l.layout::text, m.key) > 0)
    OR EXISTS (
      SELECT 1 FROM "collection_items" ci JOIN "collections" c ON c.id = ci.collection_id
      WHERE c.site_id = s.id AND strpos(ci.values::text, m.key) > 0)
  ) AND (
    EXISTS (SELECT 1 FROM "pages" p WHERE p.site_id = m.site_id AND strpos(p.content, m.key) > 0)
    OR EXISTS (SELECT 1 FROM "site_layouts" l WHERE l.site_id = m.site_id AND strpos(l.layout::text, m.key) > 0)
    OR EXISTS (
      SELECT 1 FROM "collection_items" ci JOIN "collections" c ON c.id = ci.collection_id
      WHERE c.site_id = m.site_id AND strpos(ci.values::text, m.key) > 0)
  );
