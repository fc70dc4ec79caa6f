/** Social: platform kinds and metric mapping, connected accounts, posts, the performance report and the collector. */
export * from "./accounts.ts";
export * from "./collector.ts";
export * from "./connect.ts";
export * from "./connect_cookie.ts";
export * from "./generate.ts";
export * from "./lanes.ts";
export * from "./media.ts";
export * from "./media_rules.ts";
export * from "./models.ts";
export * from "./platform.ts";
export * from "./posts.ts";
export * from "./rate_limit.ts";
export * from "./report.ts";
export * from "./text_rules.ts";
export * from "./tokens.ts";
export * from "./video_rules.ts";
