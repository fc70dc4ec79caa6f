-- Capture options beyond the viewport (hideSelectors, waitForSelector, delayMs, blockAds,
-- hideCookieBanners): one jsonb per project, merged key by key as requests name them (decision 1202).
ALTER TABLE "screenshot_projects" ADD COLUMN "capture_options" jsonb DEFAULT '{}'::jsonb NOT NULL;
