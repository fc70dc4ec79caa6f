-- One owner per render try (issue 38, decision 1440): each try that begins takes a fresh try token and
-- beats a heartbeat while it runs. Only the try holding the token completes, fails or hands back the
-- render; the sweeper re-queues a render whose job Redis lost only when no live try beats for it.
ALTER TABLE "screenshot_renders" ADD COLUMN "try_token" uuid;--> statement-breakpoint
ALTER TABLE "screenshot_renders" ADD COLUMN "heartbeat_at" timestamp with time zone;
