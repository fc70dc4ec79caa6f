-- Webhooks, second pass (issue 38; decision 1401): when an endpoint was disabled (a 410 from the
-- receiver, failing for WEBHOOK_DISABLE_AFTER_S, or PATCH enabled: false), shown as `disabledAt`.
ALTER TABLE "webhook_endpoints" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
UPDATE "webhook_endpoints" SET "disabled_at" = "updated_at" WHERE NOT "enabled";
