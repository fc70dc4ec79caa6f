import { notifyWorkEnded } from "@site/db";
import type { Context } from "@site/domain/core";
import { sql } from "drizzle-orm";
import { disableEndpoint } from "./endpoints.ts";
import type { TryOutcome } from "./metrics.ts";
import { nextTryDelayMs } from "./retry_after.ts";

/** What one try came to, as settle needs it. */
export type TryAnswer = {
  outcome: TryOutcome;
  /** The receiver's status, whatever it was (a 3xx included); null without an answer. */
  status: number | null;
  error: string | null;
  /** What the receiver's Retry-After asked for, in ms from the try (null: none). */
  retryAfterMs: number | null;
};

/** The delivery a try was for. */
export type SettledRow = { id: string; org_id: string; endpoint_id: string; attempts: number };

/**
 * Settles a delivery after one try, under the lease it was tried with: delivered on 2xx; on 410 Gone
 * failed and its endpoint disabled at once (Standard Webhooks 1.0, "Delivery success and failure": the
 * receiver "is no longer interested"; decision 1401); otherwise pending until the next try (the schedule,
 * or a 429/503's Retry-After within the longest step) or failed once the schedule is spent. The next
 * try's time is reckoned on `ctx.clock`, as the claim compares it. An endpoint failing without a success
 * for WEBHOOK_DISABLE_AFTER_S is disabled; either way `webhook.endpoint.disabled` is recorded. Each
 * outcome is committed with a NOTIFY work_ended of the delivery's id, which wakes retry_webhook_delivery's
 * waiters (decision 1512).
 */
export async function settleTry(
  ctx: Context,
  row: SettledRow,
  leaseToken: string,
  result: TryAnswer,
): Promise<void> {
  const cfg = ctx.config.webhooks;
  const now = ctx.clock.now();
  if (result.outcome === "delivered") {
    await ctx.db.transaction(async (tx) => {
      await tx.execute(sql`
        update webhook_deliveries set status = 'delivered', last_status_code = ${result.status},
          last_error = null, next_attempt_at = null, lease_until = null, lease_token = null,
          delivered_at = now(), updated_at = now()
        where id = ${row.id}::uuid and lease_token = ${leaseToken}::uuid`);
      await notifyWorkEnded(tx, row.id);
      await tx.execute(sql`
        update webhook_endpoints set failing_since = null
        where id = ${row.endpoint_id}::uuid and failing_since is not null`);
    });
    return;
  }
  if (result.status === 410) {
    await ctx.db.transaction(async (tx) => {
      const settled = await tx.execute(sql`
        update webhook_deliveries set status = 'failed', last_status_code = 410,
          last_error = 'the receiver answered HTTP 410 Gone: the endpoint was disabled',
          next_attempt_at = null, lease_until = null, lease_token = null, updated_at = now()
        where id = ${row.id}::uuid and lease_token = ${leaseToken}::uuid
        returning id`);
      if (settled.length === 0) return;
      await notifyWorkEnded(tx, row.id);
      const off = await disableEndpoint(tx, row.endpoint_id, {
        reason:
          "disabled: the receiver answered 410 Gone (it wants no more webhooks); PATCH enabled: true turns it back on",
        pendingWhy: "the endpoint was disabled: the receiver answered 410 Gone",
        at: now,
      });
      if (off)
        ctx.log.warn("webhook endpoint disabled: 410 Gone", {
          endpointId: row.endpoint_id,
          orgId: row.org_id,
        });
    });
    return;
  }
  const delay = nextTryDelayMs(cfg.retryScheduleS, row.attempts, result);
  const next = delay === null ? null : new Date(now.getTime() + delay).toISOString();
  await ctx.db.transaction(async (tx) => {
    await tx.execute(sql`
      update webhook_deliveries set
        status = ${next === null ? "failed" : "pending"},
        last_status_code = ${result.status}, last_error = ${result.error},
        next_attempt_at = ${next}::timestamptz,
        lease_until = null, lease_token = null, updated_at = now()
      where id = ${row.id}::uuid and lease_token = ${leaseToken}::uuid`);
    await notifyWorkEnded(tx, row.id);
    // The endpoint's failure clock starts at its first failure since its last success.
    const [ep] = await tx.execute<{ disable: boolean; since: string }>(sql`
      update webhook_endpoints set failing_since = coalesce(failing_since, now())
      where id = ${row.endpoint_id}::uuid
      returning failing_since <= now() - ${`${cfg.disableAfterS} seconds`}::interval as disable,
        failing_since::text as since`);
    if (!ep?.disable) return;
    const days = Math.round((cfg.disableAfterS / 86400) * 10) / 10;
    const reason = `disabled: every try has failed since ${new Date(ep.since).toISOString()} (${days} days or more); the last: ${result.error ?? "no answer"}`;
    const off = await disableEndpoint(tx, row.endpoint_id, {
      reason,
      pendingWhy: "the endpoint was disabled after failing for too long",
      at: now,
    });
    if (off)
      ctx.log.warn("webhook endpoint disabled", { endpointId: row.endpoint_id, orgId: row.org_id, reason });
  });
}
