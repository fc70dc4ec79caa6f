import type { Context, Principal } from "@site/domain/core";
import { sql } from "drizzle-orm";
import type { SubscribedEndpoint, WebhookEventType } from "./models.ts";

/** The scope that may see where an endpoint is (CONTRACT "Webhooks, second pass"; decision 1400). */
const SEES_URLS = "webhooks:write";

/**
 * The organization's enabled endpoints subscribed to at least one of `types`, each with those of
 * `types` it takes (oldest endpoint first): what a tool result says will follow (decision 0844). The
 * URL is there only for a key with webhooks:write: a receiver's URL often carries a token, and other
 * keys are refused on the webhook routes, so they learn how many endpoints, never where (decision 1400).
 */
export async function subscribedEndpoints(
  ctx: Context,
  principal: Pick<Principal, "orgId" | "scopes">,
  types: readonly WebhookEventType[],
): Promise<SubscribedEndpoint[]> {
  if (types.length === 0) return [];
  const wanted = `{${types.join(",")}}`;
  const rows = await ctx.db.execute<{ id: string; url: string; events: WebhookEventType[] }>(sql`
    select id, url, events
    from webhook_endpoints
    where org_id = ${principal.orgId}::uuid and enabled and events && ${wanted}::text[]
    order by created_at, id`);
  const seesUrls = principal.scopes.includes(SEES_URLS);
  return rows.map((r) => ({
    id: r.id,
    ...(seesUrls ? { url: r.url } : {}),
    events: types.filter((t) => r.events.includes(t)),
  }));
}
