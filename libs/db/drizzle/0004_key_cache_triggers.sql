-- Every process's key cache drops a key the moment it stops being good, whatever wrote the change: the
-- API's revoke route, the operator CLI, or SQL typed by hand. PostgreSQL delivers these at commit.
CREATE OR REPLACE FUNCTION site_notify_key_change() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('site_api_key_revoked', OLD.id);
  RETURN NULL;
END $$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER api_keys_notify_cache AFTER UPDATE OR DELETE ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION site_notify_key_change();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION site_notify_member_change() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('site_api_key_revoked', 'member:' || OLD.org_id || ':' || OLD.user_id);
  RETURN NULL;
END $$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER memberships_notify_cache AFTER UPDATE OR DELETE ON "memberships"
  FOR EACH ROW EXECUTE FUNCTION site_notify_member_change();
