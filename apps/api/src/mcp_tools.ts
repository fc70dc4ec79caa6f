import { checkInput } from "@site/domain/core";
import { CAMPAIGN_EDIT_TOOLS } from "./mcp_tools/campaign_edits.ts";
import { CAMPAIGN_TOOLS } from "./mcp_tools/campaigns.ts";
import { CLIP_TOOLS } from "./mcp_tools/clips.ts";
import { COLLECTION_TOOLS } from "./mcp_tools/collections.ts";
import { JOB_TOOLS } from "./mcp_tools/jobs.ts";
import { MEDIA_TOOLS } from "./mcp_tools/media.ts";
import { NEWSLETTER_TOOLS } from "./mcp_tools/newsletters.ts";
import { SCREENSHOT_TOOLS } from "./mcp_tools/screenshots.ts";
import { SITE_BUILDING_TOOLS } from "./mcp_tools/site_building.ts";
import { SITE_CONTENT_TOOLS } from "./mcp_tools/site_content.ts";
import { SITE_ONE_TOOLS } from "./mcp_tools/site_one.ts";
import { SITE_TOOLS } from "./mcp_tools/sites.ts";
import { SOCIAL_TOOLS } from "./mcp_tools/social.ts";
import { SOCIAL_ACCOUNT_TOOLS } from "./mcp_tools/social_accounts.ts";
import { SOCIAL_MEDIA_TOOLS } from "./mcp_tools/social_media.ts";
import { SOCIAL_PERFORMANCE_TOOLS } from "./mcp_tools/social_performance.ts";
import { SUBSCRIBER_TOOLS } from "./mcp_tools/subscribers.ts";
import { type Tool, withRouteScope } from "./mcp_tools/tool.ts";
import { WEBHOOK_TOOLS } from "./mcp_tools/webhooks.ts";

export { mediaEmbedSnippet } from "./mcp_tools/inputs.ts";
export type { Tool } from "./mcp_tools/tool.ts";

/**
 * A tool whose arguments object admits no name it does not declare (`additionalProperties: false`), so
 * a misspelt argument (`etag` for `ifMatch`) is a VALIDATION_ERROR naming it, not silently dropped.
 */
function strict(t: Tool): Tool {
  const input = t.input as { type?: string; additionalProperties?: unknown };
  if (input.type !== "object" || input.additionalProperties === false) return t;
  return { ...t, input: { ...t.input, additionalProperties: false } };
}

/**
 * The tools: each takes the same model as its HTTP route (plus `siteId` where the route has it in the
 * path, and the limits a schema can state) and calls the same domain function, so every rule holds here
 * too. Their arguments are strict (no unknown names).
 */
export const TOOLS: Tool[] = [
  ...SITE_TOOLS,
  ...SITE_ONE_TOOLS,
  ...MEDIA_TOOLS,
  ...SCREENSHOT_TOOLS,
  ...SITE_BUILDING_TOOLS,
  ...SITE_CONTENT_TOOLS,
  ...COLLECTION_TOOLS,
  ...NEWSLETTER_TOOLS,
  ...SOCIAL_TOOLS,
  ...SOCIAL_MEDIA_TOOLS,
  ...SOCIAL_PERFORMANCE_TOOLS,
  ...CLIP_TOOLS,
  ...JOB_TOOLS,
  ...SUBSCRIBER_TOOLS,
  ...CAMPAIGN_TOOLS,
  ...CAMPAIGN_EDIT_TOOLS,
  ...SOCIAL_ACCOUNT_TOOLS,
  ...WEBHOOK_TOOLS,
].map((t) => withRouteScope(strict(t)));

/** The tools a key may call: those whose scope it carries, or that need none (tools/list shows no others). */
export function toolsFor(scopes: readonly string[]): Tool[] {
  return TOOLS.filter((t) => t.scope === null || scopes.includes(t.scope));
}

/** Checks a tool's arguments against its model: 400-style VALIDATION_ERROR naming each field. */
export function checkToolArgs(t: Tool, args: unknown): unknown {
  return checkInput(t.input, args ?? {});
}
