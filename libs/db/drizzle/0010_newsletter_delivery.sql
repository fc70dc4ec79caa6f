ALTER TABLE "newsletter_campaigns" ADD COLUMN "error" text;
--> statement-breakpoint
ALTER TABLE "newsletter_campaigns" ADD COLUMN "runs" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "newsletter_campaigns" ADD COLUMN "media_generation" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "newsletter_campaigns" DROP CONSTRAINT "newsletter_campaigns_status_check";
--> statement-breakpoint
ALTER TABLE "newsletter_campaigns" ADD CONSTRAINT "newsletter_campaigns_status_check" CHECK ("newsletter_campaigns"."status" in ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'));
--> statement-breakpoint
CREATE TABLE "newsletter_test_sends" (
	"org_id" uuid NOT NULL,
	"day" date NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "newsletter_test_sends_org_id_day_pk" PRIMARY KEY("org_id","day")
);
--> statement-breakpoint
ALTER TABLE "newsletter_test_sends" ADD CONSTRAINT "newsletter_test_sends_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
