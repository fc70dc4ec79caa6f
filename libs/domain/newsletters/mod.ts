/** Newsletters: subscribers with double opt-in, campaigns with library media, previews, sending by SMTP exactly once per recipient. */
export * from "./bounces.ts";
export * from "./campaign_html.ts";
export * from "./campaign_media.ts";
export * from "./campaign_sanitize.ts";
export * from "./campaigns.ts";
export * from "./csv.ts";
export * from "./dkim.ts";
export * from "./emails.ts";
export * from "./inbound.ts";
export * from "./mailer.ts";
export * from "./message.ts";
export * from "./models.ts";
export * from "./sender.ts";
export * from "./sending.ts";
export * from "./subscribers.ts";
export * from "./tokens.ts";
