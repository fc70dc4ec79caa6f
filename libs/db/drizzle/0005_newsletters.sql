CREATE TABLE "newsletter_campaigns" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"site_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"preheader" text,
	"from_name" text,
	"html" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"send_at" timestamp (6) with time zone,
	"started_at" timestamp (6) with time zone,
	"finished_at" timestamp (6) with time zone,
	"fanned_out_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "newsletter_campaigns_status_check" CHECK ("newsletter_campaigns"."status" in ('draft', 'scheduled', 'sending', 'sent', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "newsletter_recipients" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"campaign_id" uuid NOT NULL,
	"subscriber_id" uuid NOT NULL,
	"email" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"lease_until" timestamp (6) with time zone,
	"tries" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"sent_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "newsletter_recipients_campaign_subscriber_unique" UNIQUE("campaign_id","subscriber_id"),
	CONSTRAINT "newsletter_recipients_status_check" CHECK ("newsletter_recipients"."status" in ('queued', 'sending', 'sent', 'failed', 'bounced', 'skipped'))
);
--> statement-breakpoint
CREATE TABLE "newsletter_subscribers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"site_id" uuid NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"status" text NOT NULL,
	"confirm_sent_at" timestamp (6) with time zone,
	"confirmed_at" timestamp (6) with time zone,
	"unsubscribed_at" timestamp (6) with time zone,
	"bounced_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "newsletter_subscribers_site_email_unique" UNIQUE("site_id","email"),
	CONSTRAINT "newsletter_subscribers_status_check" CHECK ("newsletter_subscribers"."status" in ('pending', 'active', 'unsubscribed', 'bounced'))
);
--> statement-breakpoint
ALTER TABLE "newsletter_campaigns" ADD CONSTRAINT "newsletter_campaigns_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_recipients" ADD CONSTRAINT "newsletter_recipients_campaign_id_newsletter_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."newsletter_campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_recipients" ADD CONSTRAINT "newsletter_recipients_subscriber_id_newsletter_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."newsletter_subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_subscribers" ADD CONSTRAINT "newsletter_subscribers_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "newsletter_campaigns_site_created_idx" ON "newsletter_campaigns" USING btree ("site_id","created_at","id");--> statement-breakpoint
CREATE INDEX "newsletter_campaigns_status_idx" ON "newsletter_campaigns" USING btree ("status");--> statement-breakpoint
CREATE INDEX "newsletter_recipients_campaign_status_idx" ON "newsletter_recipients" USING btree ("campaign_id","status");--> statement-breakpoint
CREATE INDEX "newsletter_subscribers_site_created_idx" ON "newsletter_subscribers" USING btree ("site_id","created_at","id");