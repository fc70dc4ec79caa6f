-- Social posts on their own clock (issue 33): a post is stored with its targets and each target is
-- published by a job; scheduled posts wait for `scheduled_at`. Existing posts are done.
ALTER TABLE "social_posts" ADD COLUMN "status" text DEFAULT 'done' NOT NULL;--> statement-breakpoint
ALTER TABLE "social_posts" ADD COLUMN "scheduled_at" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "social_posts" ADD COLUMN "updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "next_try_at" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "tries" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "try_started_at" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "lease_token" uuid;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "lease_until" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "retry_until" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "social_targets" ADD COLUMN "ended_at" timestamp (6) with time zone;--> statement-breakpoint
CREATE INDEX "social_posts_org_scheduled_idx" ON "social_posts" USING btree ("org_id","scheduled_at","id");--> statement-breakpoint
CREATE INDEX "social_targets_open_idx" ON "social_targets" USING btree ("next_try_at") WHERE "status" IN ('scheduled', 'publishing');
