ALTER TABLE "social_posts" ADD COLUMN "platform_options" jsonb DEFAULT '{}'::jsonb NOT NULL;
--> statement-breakpoint
ALTER TABLE "social_oauth_states" ADD COLUMN "user_id" uuid;
--> statement-breakpoint
ALTER TABLE "social_oauth_states" ADD COLUMN "pending_ciphertext" text;
--> statement-breakpoint
ALTER TABLE "social_oauth_states" ADD COLUMN "confirm_hash" text;
--> statement-breakpoint
ALTER TABLE "social_oauth_states" ADD COLUMN "confirmed_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "social_accounts" ADD COLUMN "expiry_warned_at" timestamp with time zone;
