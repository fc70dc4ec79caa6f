-- Bounded replays (decisions 1410–1413): how many bytes each kept answer weighs (the organization's
-- rolling-day budget sums them, through the index below), and why an answer was not kept (too large,
-- over the budget) while its key still holds.
ALTER TABLE "idempotency_keys" ADD COLUMN "answer_bytes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "not_kept" text;--> statement-breakpoint
CREATE INDEX "idempotency_keys_org_created_idx" ON "idempotency_keys" USING btree ("org_id","created_at") INCLUDE ("answer_bytes");
