-- Device clips (issue 26, decision 1220): a clip is a render of the render farm, so it shares the
-- per-organization admission, the sweeper and the refund of stills. It belongs to an organization's
-- social library, not to a site: site_id may be null for kind 'clip'.
ALTER TABLE "screenshot_renders" ADD COLUMN "kind" text DEFAULT 'still' NOT NULL;--> statement-breakpoint
ALTER TABLE "screenshot_renders" ALTER COLUMN "site_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD COLUMN "poster_key" text;--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD COLUMN "media_id" uuid;--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD CONSTRAINT "screenshot_renders_kind_check" CHECK ("screenshot_renders"."kind" in ('still', 'clip'));--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD CONSTRAINT "screenshot_renders_site_of_still" CHECK ("screenshot_renders"."kind" = 'clip' OR "screenshot_renders"."site_id" IS NOT NULL);--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD CONSTRAINT "screenshot_renders_media_id_social_media_id_fk" FOREIGN KEY ("media_id") REFERENCES "public"."social_media"("id") ON DELETE set null ON UPDATE no action;
