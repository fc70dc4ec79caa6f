ALTER TABLE "screenshot_renders" ADD COLUMN "dispatched_at" timestamp (6) with time zone;--> statement-breakpoint
CREATE INDEX "screenshot_renders_org_pending_idx" ON "screenshot_renders" USING btree ("org_id","created_at") WHERE "screenshot_renders"."status" = 'pending';--> statement-breakpoint
-- Renders pending before admission existed were all enqueued: they count as dispatched.
UPDATE "screenshot_renders" SET "dispatched_at" = "updated_at" WHERE "status" = 'pending';
