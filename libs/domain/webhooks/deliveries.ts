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

/** What a delivery's view is made of (deliveryView), as the list and one delivery read it. */
const deliveryColumns = {
  id: webhookDeliveries.id,
  event: webhookEvents.type,
  status: webhookDeliveries.status,
  attempts: webhookDeliveries.attempts,
  lastStatusCode: webhookDeliveries.lastStatusCode,
  lastError: webhookDeliveries.lastError,
  nextAttemptAt: webhookDeliveries.nextAttemptAt,
  createdAt: webhookDeliveries.createdAt,
};

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
      ...deliveryColumns,
      at: sql<string>`${d.createdAt}::text`,
    })
    .from(d)
    .innerJoin(webhookEvents, eq(webhookEvents.id, d.eventId))
    .where(and(eq(d.endpointId, endpoint.id), olderThan(d.createdAt, d.id, page.cursor)))
    .orderBy(...newestFirst(d.createdAt, d.id))
    .limit(limit + 1);
  const { page: shown, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.id }));
  return {
    deliveries: shown.map(deliveryView),
    nextCursor,
  };
}

type DeliveryRow = {
  id: string;
  event: string;
  status: WebhookDeliveryView["status"];
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
};

function deliveryView(r: DeliveryRow): WebhookDeliveryView {
  return {
    id: r.id,
    event: r.event as WebhookEventType,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.lastStatusCode,
    lastError: r.lastError,
    nextAttemptAt: r.status === "pending" && r.nextAttemptAt ? r.nextAttemptAt.toISOString() : null,
    createdAt: r.createdAt.toISOString(),
  };
}

/** One delivery of an endpoint as the log shows it, and whether a try of it is in flight now (leased). */
export type DeliveryTryState = { delivery: WebhookDeliveryView; inFlight: boolean };

/** Reads one delivery of the principal's endpoint (NOT_FOUND for another's or an unknown one). */
export async function readDeliveryTry(
  ctx: Context,
  principal: Principal,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryTryState> {
  const endpoint = await ownWebhook(ctx, principal, webhookId);
  if (!isUuid(deliveryId)) throw notFound("delivery");
  const d = webhookDeliveries;
  const [row] = await ctx.db
    .select({
      ...deliveryColumns,
      inFlight: sql<boolean>`(${d.leaseToken} is not null and ${d.leaseUntil} > now())`,
    })
    .from(d)
    .innerJoin(webhookEvents, eq(webhookEvents.id, d.eventId))
    .where(and(eq(d.id, deliveryId), eq(d.endpointId, endpoint.id)));
  if (!row) throw notFound("delivery");
  return { delivery: deliveryView(row), inFlight: Boolean(row.inFlight) };
}

/**
 * Whether the try a retry asked for has ended (decision 1512): none is in flight, and the delivery
 * was delivered, failed for good, or counts more tries than `attemptsAtRetry` (a failed try with a
 * next one scheduled). Each of these is committed with a NOTIFY work_ended of the delivery's id.
 */
export function retriedTryEnded(state: DeliveryTryState, attemptsAtRetry: number): boolean {
  if (state.inFlight) return false;
  return state.delivery.status !== "pending" || state.delivery.attempts > attemptsAtRetry;
}

/**
 * Tries a delivery again now, whatever its state (decision 0842): a pending one is moved up, a failed or
 * delivered one is sent once more with the same webhook-id. 409 while the endpoint is disabled; a try
 * in flight is not interrupted (its outcome settles the row). Answers the delivery's try count at the
 * retry, which retriedTryEnded compares with.
 */
export async function retryDelivery(
  ctx: Context,
  principal: Principal,
  webhookId: string,
  deliveryId: string,
): Promise<{ attempts: number }> {
  const endpoint = await ownWebhook(ctx, principal, webhookId);
  if (!isUuid(deliveryId)) throw notFound("delivery");
  if (!endpoint.enabled)
    throw new AppError(
      "CONFLICT",
      "the webhook is disabled: enable it (enabled: true, by PATCH or the update_webhook tool) before retrying",
    );
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx.execute<{ attempts: number }>(sql`
      update webhook_deliveries set status = 'pending', next_attempt_at = ${ctx.clock.now().toISOString()}::timestamptz,
        updated_at = now()
      where id = ${deliveryId}::uuid and endpoint_id = ${endpoint.id}::uuid
      returning attempts`);
    if (!row) throw notFound("delivery");
    await tx.execute(sql`select pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, ${principal.orgId})`);
    return { attempts: Number(row.attempts) };
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
