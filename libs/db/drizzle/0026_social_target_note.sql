-- Issue 33: a target published without a public URL says why (an unaudited TikTok app's private post).
ALTER TABLE "social_targets" ADD COLUMN IF NOT EXISTS "note" text;
