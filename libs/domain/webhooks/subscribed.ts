import type { Context } from "@site/domain/core";
import { sql } from "drizzle-orm";
import type { SubscribedEndpoint, WebhookEventType } from "./models.ts";

/**
 * The organization's enabled endpoints subscribed to at least one of `types`, each with those of
 * `types` it takes (oldest endpoint first): what a tool result says will follow (decision 0844).
 */
export async function subscribedEndpoints(
  ctx: Context,
  orgId: string,
  types: readonly WebhookEventType[],
): Promise<SubscribedEndpoint[]> {
  if (types.length === 0) return [];
  const wanted = `{${types.join(",")}}`;
  const rows = await ctx.db.execute<{ id: string; url: string; events: WebhookEventType[] }>(sql`
    select id, url, events
    from webhook_endpoints
    where org_id = ${orgId}::uuid and enabled and events && ${wanted}::text[]
    order by created_at, id`);
  return rows.map((r) => ({ id: r.id, url: r.url, events: types.filter((t) => r.events.includes(t)) }));
}
