-- Mail replies read as the mail standards classify them (issue 34, decisions 1450-1455).
-- A campaign paused because its relay could not be reached resumes by itself once the relay answers.
ALTER TABLE "newsletter_campaigns" ADD COLUMN "resume_when_reachable" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Where a subscriber's consent came from (api, form, import) and when it was given.
ALTER TABLE "newsletter_subscribers" ADD COLUMN "source" text;--> statement-breakpoint
ALTER TABLE "newsletter_subscribers" ADD COLUMN "consented_at" timestamp (6) with time zone;--> statement-breakpoint
-- When an admin last made a bounced subscriber active again (soft bounces before it no longer count).
ALTER TABLE "newsletter_subscribers" ADD COLUMN "reactivated_at" timestamp (6) with time zone;--> statement-breakpoint
-- Every report about a subscriber's mail (a refusal at RCPT TO, a DSN): kept, shown, counted.
CREATE TABLE "newsletter_bounces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subscriber_id" uuid NOT NULL,
	"campaign_id" uuid,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"status" text NOT NULL,
	"kind" text NOT NULL,
	"diagnostic" text,
	CONSTRAINT "newsletter_bounces_kind_check" CHECK ("newsletter_bounces"."kind" in ('hard', 'soft', 'policy'))
);--> statement-breakpoint
ALTER TABLE "newsletter_bounces" ADD CONSTRAINT "newsletter_bounces_subscriber_id_newsletter_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."newsletter_subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_bounces" ADD CONSTRAINT "newsletter_bounces_campaign_id_newsletter_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."newsletter_campaigns"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "newsletter_bounces_subscriber_at_idx" ON "newsletter_bounces" USING btree ("subscriber_id","at");--> statement-breakpoint
CREATE INDEX "newsletter_bounces_campaign_kind_idx" ON "newsletter_bounces" USING btree ("campaign_id","kind");--> statement-breakpoint
-- Settings the processes share through the database (the API's PUBLIC_BASE_URL, for daemons on other machines).
CREATE TABLE "service_records" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
