CREATE TABLE "site_media_versions" (
	"site_id" uuid PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "site_media_versions" ADD CONSTRAINT "site_media_versions_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Whatever writes media_files (an upload landing, an import, a render, a delete, a cascade, SQL typed by
-- hand), the site's counter moves in the same transaction: a cached page of its library whose counter
-- differs is not served (decision 0810). Once per statement, for each site it touched that still exists.
CREATE OR REPLACE FUNCTION site_bump_media_version() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO site_media_versions (site_id, version)
      SELECT DISTINCT n.site_id, 1 FROM site_media_new n JOIN sites s ON s.id = n.site_id
      ON CONFLICT (site_id) DO UPDATE SET version = site_media_versions.version + 1;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO site_media_versions (site_id, version)
      SELECT DISTINCT t.site_id, 1
      FROM (SELECT site_id FROM site_media_new UNION SELECT site_id FROM site_media_old) t
      JOIN sites s ON s.id = t.site_id
      ON CONFLICT (site_id) DO UPDATE SET version = site_media_versions.version + 1;
  ELSE
    INSERT INTO site_media_versions (site_id, version)
      SELECT DISTINCT o.site_id, 1 FROM site_media_old o JOIN sites s ON s.id = o.site_id
      ON CONFLICT (site_id) DO UPDATE SET version = site_media_versions.version + 1;
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER media_files_version_insert AFTER INSERT ON "media_files"
  REFERENCING NEW TABLE AS site_media_new
  FOR EACH STATEMENT EXECUTE FUNCTION site_bump_media_version();
--> statement-breakpoint
CREATE TRIGGER media_files_version_update AFTER UPDATE ON "media_files"
  REFERENCING OLD TABLE AS site_media_old NEW TABLE AS site_media_new
  FOR EACH STATEMENT EXECUTE FUNCTION site_bump_media_version();
--> statement-breakpoint
CREATE TRIGGER media_files_version_delete AFTER DELETE ON "media_files"
  REFERENCING OLD TABLE AS site_media_old
  FOR EACH STATEMENT EXECUTE FUNCTION site_bump_media_version();
