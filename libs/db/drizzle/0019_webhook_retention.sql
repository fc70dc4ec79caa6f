-- Webhook retention (decision 0845): settled deliveries are found by when they settled, and an event's
-- deliveries by event (the cascade from a deleted event, and the sweep's "no delivery left" test).
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_settled_idx" ON "webhook_deliveries" USING btree ("updated_at") WHERE "webhook_deliveries"."status" <> 'pending';
