import { webhookDeliveries, webhookEvents } from "@site/db";
import {
  AppError,
  type Context,
  isUuid,
  keysetPage,
  newestFirst,
  notFound,
  olderThan,
  type Principal,
  validationError,
} from "@site/domain/core";
import { and, eq, sql } from "drizzle-orm";
import { ownWebhook } from "./endpoints.ts";
import { WEBHOOK_NOTIFY_CHANNEL } from "./events.ts";
import type { WebhookDeliveryView, WebhookEventType } from "./models.ts";

/** The delivery log of an endpoint, newest first, in pages of `limit` (default 50, at most 100). */
export async function listDeliveries(
  ctx: Context,
  principal: Principal,
  webhookId: string,
  page: { limit?: number; cursor?: string } = {},
): Promise<{ deliveries: WebhookDeliveryView[]; nextCursor: string | null }> {
  const endpoint = await ownWebhook(ctx, principal, webhookId);
  const limit = Math.min(Math.max(page.limit ?? 50, 1), 100);
  const d = webhookDeliveries;
  const rows = await ctx.db
    .select({
      id: d.id,
      event: webhookEvents.type,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      nextAttemptAt: d.nextAttemptAt,
      createdAt: d.createdAt,
      at: sql<string>`${d.createdAt}::text`,
    })
    .from(d)
    .innerJoin(webhookEvents, eq(webhookEvents.id, d.eventId))
    .where(and(eq(d.endpointId, endpoint.id), olderThan(d.createdAt, d.id, page.cursor)))
    .orderBy(...newestFirst(d.createdAt, d.id))
    .limit(limit + 1);
  const { page: shown, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.id }));
  return {
    deliveries: shown.map((r) => ({
      id: r.id,
      event: r.event as WebhookEventType,
      status: r.status,
      attempts: r.attempts,
      lastStatusCode: r.lastStatusCode,
      lastError: r.lastError,
      nextAttemptAt: r.status === "pending" && r.nextAttemptAt ? r.nextAttemptAt.toISOString() : null,
      createdAt: r.createdAt.toISOString(),
    })),
    nextCursor,
  };
}

/**
 * Tries a delivery again now, whatever its state (decision 0842): a pending one is moved up, a failed or
 * delivered one is sent once more with the same webhook-id. 409 while the endpoint is disabled; a try
 * in flight is not interrupted (its outcome settles the row).
 */
export async function retryDelivery(
  ctx: Context,
  principal: Principal,
  webhookId: string,
  deliveryId: string,
): Promise<void> {
  const endpoint = await ownWebhook(ctx, principal, webhookId);
  if (!isUuid(deliveryId)) throw notFound("delivery");
  if (!endpoint.enabled)
    throw new AppError(
      "CONFLICT",
      "the webhook is disabled: enable it (enabled: true, by PATCH or the update_webhook tool) before retrying",
    );
  await ctx.db.transaction(async (tx) => {
    const rows = await tx.execute<{ id: string }>(sql`
      update webhook_deliveries set status = 'pending', next_attempt_at = ${ctx.clock.now().toISOString()}::timestamptz,
        updated_at = now()
      where id = ${deliveryId}::uuid and endpoint_id = ${endpoint.id}::uuid
      returning id`);
    if (rows.length === 0) throw notFound("delivery");
    await tx.execute(sql`select pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, ${principal.orgId})`);
  });
}

/** How far back `recover` reaches (CONTRACT "Webhooks, second pass": at most 14 days). */
export const RECOVER_MAX_BACK_MS = 14 * 86_400_000;

/**
 * Svix's "recover" (decision 1403): every failed delivery of an endpoint created at or after `since`
 * is tried again at once, each with its own webhook-id, as a manual retry does; pending and delivered
 * ones are left alone. `since`: an ISO 8601 date-time, not in the future and at most 14 days back, else
 * 400 VALIDATION_ERROR; 409 while the endpoint is disabled. Answers how many were queued.
 */
export async function recoverDeliveries(
  ctx: Context,
  principal: Principal,
  webhookId: string,
  since: string,
): Promise<{ deliveries: number }> {
  const endpoint = await ownWebhook(ctx, principal, webhookId);
  const at = Date.parse(since);
  const now = ctx.clock.now();
  if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(at))
    throw validationError("since", "since must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z");
  if (at > now.getTime()) throw validationError("since", "since is in the future");
  if (at < now.getTime() - RECOVER_MAX_BACK_MS)
    throw validationError("since", "since may be at most 14 days back");
  if (!endpoint.enabled)
    throw new AppError(
      "CONFLICT",
      "the webhook is disabled: enable it (enabled: true, by PATCH or the update_webhook tool) before recovering its deliveries",
    );
  return ctx.db.transaction(async (tx) => {
    const rows = await tx.execute<{ id: string }>(sql`
      update webhook_deliveries set status = 'pending', next_attempt_at = ${now.toISOString()}::timestamptz,
        updated_at = now()
      where endpoint_id = ${endpoint.id}::uuid and status = 'failed'
        and created_at >= ${new Date(at).toISOString()}::timestamptz
      returning id`);
    if (rows.length > 0)
      await tx.execute(sql`select pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, ${principal.orgId})`);
    return { deliveries: rows.length };
  });
}
