/** Content: MDX parsing and URL scanning, sanitizing, page scans in their worker pool, media references in text and plain-text checks (the HTML escaper is in core). */
export * from "./mdx_sanitize.ts";
export * from "./mdx_urls.ts";
export * from "./page_scan.ts";
export * from "./page_scan_pool.ts";
export * from "./plain_text.ts";
export * from "./text_media.ts";
