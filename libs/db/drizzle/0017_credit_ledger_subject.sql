-- The ledger's key names what a debit or refund paid for: a screenshot or clip render, or an image generation.
ALTER TABLE "credit_ledger" RENAME COLUMN "render_id" TO "subject_id";--> statement-breakpoint
ALTER TABLE "credit_ledger" RENAME CONSTRAINT "credit_ledger_render_reason" TO "credit_ledger_subject_reason";
