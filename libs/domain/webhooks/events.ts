import type { Tx } from "@site/db";
import { sql } from "drizzle-orm";
import type { WebhookEventType } from "./models.ts";

/** The channel a committed event is announced on: dispatchers LISTEN and claim at once. */
export const WEBHOOK_NOTIFY_CHANNEL = "webhook_deliveries";

/** An event to record: its organization, its name, and the resource (or how to build it). */
export type EventInput = {
  orgId: string;
  type: WebhookEventType;
  /**
   * The resource as its GET answers it. A function is called only when some endpoint wants the event,
   * so a change that nobody listens to costs one indexed read and nothing more.
   */
  data: unknown | (() => unknown | Promise<unknown>);
};

/**
 * Records an event IN THE CALLER'S TRANSACTION (the outbox, decision 0840): the event row and one
 * pending delivery per enabled endpoint of the organization subscribed to it commit or roll back with
 * the change they report, so no event is lost when a process dies after the change, and none is sent
 * for a change that did not happen. A notice on WEBHOOK_NOTIFY_CHANNEL (delivered by PostgreSQL only
 * at commit) wakes the dispatchers. Returns the delivery ids (none when no endpoint wants the event).
 */
export async function recordEvent(tx: Tx, event: EventInput): Promise<string[]> {
  const endpoints = await tx.execute<{ id: string }>(sql`
    select id from webhook_endpoints
    where org_id = ${event.orgId}::uuid and enabled and ${event.type} = any(events)`);
  if (endpoints.length === 0) return [];
  const data = typeof event.data === "function" ? await (event.data as () => unknown)() : event.data;
  const ids = endpoints.map((e) => e.id);
  const rows = await tx.execute<{ id: string }>(sql`
    with ev as (
      insert into webhook_events (org_id, type, data)
      values (${event.orgId}::uuid, ${event.type}, ${JSON.stringify(data ?? null)}::jsonb)
      returning id, created_at
    )
    insert into webhook_deliveries (org_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
    select ${event.orgId}::uuid, e.id, ev.id, ev.created_at, ev.created_at, ev.created_at
    from ev, unnest(${`{${ids.join(",")}}`}::uuid[]) as e(id)
    returning id`);
  await tx.execute(sql`select pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, ${event.orgId})`);
  return rows.map((r) => r.id);
}
