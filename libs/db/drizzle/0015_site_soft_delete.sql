ALTER TABLE "sites" ADD COLUMN "deleted_at" timestamp (6) with time zone;--> statement-breakpoint
CREATE INDEX "sites_deleted_idx" ON "sites" USING btree ("deleted_at") WHERE "deleted_at" IS NOT NULL;
