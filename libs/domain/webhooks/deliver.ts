import type { Context } from "@site/domain/core";
import { GuardedFetchError, guardedFetchStream } from "@site/net";
import type { WebhookDeliveryPayload } from "@site/queue";
import { sql } from "drizzle-orm";
import { failPendingOf, signingSecrets } from "./endpoints.ts";
import { observeTry, type TryOutcome } from "./metrics.ts";
import { signWebhook } from "./signing.ts";

/** At most this much of a receiver's answer is read (kept in the log as nothing more than its status). */
const MAX_ANSWER_BYTES = 4096;

type Claimed = {
  id: string;
  org_id: string;
  endpoint_id: string;
  attempts: number;
  type: string;
  data: string;
  event_at: string;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
};

/** What one try did, for the caller's log. */
export type TryResult = { outcome: TryOutcome | "skipped"; status: number | null; error: string | null };

/**
 * One try of one delivery (the `webhook-delivery` job): runs only while the row is still pending under
 * the lease its dispatcher claimed (so a duplicate job sends nothing), POSTs `{type, timestamp, data}`
 * signed as Standard Webhooks to the receiver through the guarded fetch (the URL import's guard: public
 * addresses only, DNS pinned, no redirect followed, WEBHOOK_TIMEOUT_MS), reads at most 4 KB of the
 * answer, and settles the row: delivered on 2xx, else the next try per WEBHOOK_RETRY_SCHEDULE_S (with
 * jitter) or failed once the schedule is spent. An endpoint failing for WEBHOOK_DISABLE_AFTER_S is
 * disabled with the reason.
 */
export async function deliverWebhook(
  ctx: Context,
  job: WebhookDeliveryPayload,
  opts: { fetchTls?: { ca?: string | string[] } } = {},
): Promise<TryResult> {
  const cfg = ctx.config.webhooks;
  const [row] = await ctx.db.execute<Claimed>(sql`
    with mine as (
      update webhook_deliveries
      set lease_until = now() + ${`${cfg.timeoutMs + 5000} milliseconds`}::interval
      where id = ${job.deliveryId}::uuid and lease_token = ${job.leaseToken}::uuid and status = 'pending'
      returning id, org_id, endpoint_id, event_id, attempts
    )
    select m.id, m.org_id, m.endpoint_id, m.attempts, e.type, e.data::text as data,
      e.created_at::text as event_at, w.url, w.enabled, w.secret, w.previous_secret,
      w.previous_secret_expires_at::text as previous_secret_expires_at
    from mine m join webhook_events e on e.id = m.event_id join webhook_endpoints w on w.id = m.endpoint_id`);
  if (!row) return { outcome: "skipped", status: null, error: null };
  if (!row.enabled) {
    await failPendingOf(ctx.db, row.endpoint_id, "the endpoint was disabled");
    return { outcome: "skipped", status: null, error: "the endpoint is disabled" };
  }
  const eventAt = new Date(row.event_at);
  const body = `{"type":${JSON.stringify(row.type)},"timestamp":${JSON.stringify(eventAt.toISOString())},"data":${row.data}}`;
  const now = new Date();
  const headers = signWebhook(
    signingSecrets(
      ctx.config.secretKey,
      {
        secret: row.secret,
        previousSecret: row.previous_secret,
        previousSecretExpiresAt: row.previous_secret_expires_at
          ? new Date(row.previous_secret_expires_at)
          : null,
      },
      now,
    ),
    { id: row.id, at: now, body },
  );
  const t0 = performance.now();
  const result = await post(ctx, row.url, body, headers, opts.fetchTls);
  const seconds = (performance.now() - t0) / 1000;
  observeTry(row.type, result.outcome, seconds, (Date.now() - eventAt.getTime()) / 1000);
  await settle(ctx, row, job.leaseToken, result);
  return result;
}

async function post(
  ctx: Context,
  url: string,
  body: string,
  headers: Record<string, string>,
  tls: { ca?: string | string[] } | undefined,
): Promise<{ outcome: TryOutcome; status: number | null; error: string | null }> {
  try {
    const res = await guardedFetchStream(url, {
      method: "POST",
      body,
      headers: {
        ...headers,
        "content-type": "application/json",
        "user-agent": "site-content-api-webhooks/1",
      },
      // The answer is not kept: past 4 KB the stream is cancelled, so any declared length is accepted.
      maxBytes: Number.MAX_SAFE_INTEGER,
      timeoutMs: ctx.config.webhooks.timeoutMs,
      maxRedirects: 0,
      anyStatus: true,
      allowHosts: ctx.config.fetchAllowHosts,
      localNetwork: ctx.config.allowLocalNetworkForDevelopment,
      plainHttpToExempt: true,
      tls,
    });
    await readSome(res.body);
    if (res.status >= 200 && res.status < 300)
      return { outcome: "delivered", status: res.status, error: null };
    return { outcome: "http_error", status: res.status, error: `the receiver answered HTTP ${res.status}` };
  } catch (err) {
    if (!(err instanceof GuardedFetchError))
      return {
        outcome: "network",
        status: null,
        error: String((err as Error)?.message ?? err).slice(0, 300),
      };
    if (err.kind === "too_many_redirects")
      return {
        outcome: "http_error",
        status: null,
        error: "the receiver answered with a redirect; redirects are not followed (give the final URL)",
      };
    const outcome: TryOutcome =
      err.kind === "timeout"
        ? "timeout"
        : err.kind === "blocked" || err.kind === "invalid_url"
          ? "refused"
          : "network";
    return { outcome, status: null, error: err.message.slice(0, 300) };
  }
}

/** Reads at most MAX_ANSWER_BYTES of an answer, then lets the connection go. */
async function readSome(stream: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stream.getReader();
  let total = 0;
  try {
    while (total < MAX_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
    }
  } catch {
    // The status is what counts; a body cut short after it does not change the outcome.
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The wait before try `attempts + 1`, with ±10% jitter; null when the schedule is spent. */
export function nextDelayMs(schedule: number[], attempts: number, random = Math.random): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (0.9 + 0.2 * random()));
}

async function settle(
  ctx: Context,
  row: Claimed,
  leaseToken: string,
  result: { outcome: TryOutcome; status: number | null; error: string | null },
): Promise<void> {
  const cfg = ctx.config.webhooks;
  if (result.outcome === "delivered") {
    await ctx.db.transaction(async (tx) => {
      await tx.execute(sql`
        update webhook_deliveries set status = 'delivered', last_status_code = ${result.status},
          last_error = null, next_attempt_at = null, lease_until = null, lease_token = null,
          delivered_at = now(), updated_at = now()
        where id = ${row.id}::uuid and lease_token = ${leaseToken}::uuid`);
      await tx.execute(sql`
        update webhook_endpoints set failing_since = null
        where id = ${row.endpoint_id}::uuid and failing_since is not null`);
    });
    return;
  }
  const delay = nextDelayMs(cfg.retryScheduleS, row.attempts);
  await ctx.db.transaction(async (tx) => {
    await tx.execute(sql`
      update webhook_deliveries set
        status = ${delay === null ? "failed" : "pending"},
        last_status_code = ${result.status}, last_error = ${result.error},
        next_attempt_at = ${delay === null ? null : sql`now() + ${`${delay} milliseconds`}::interval`},
        lease_until = null, lease_token = null, updated_at = now()
      where id = ${row.id}::uuid and lease_token = ${leaseToken}::uuid`);
    // The endpoint's failure clock starts at its first failure since its last success.
    const [ep] = await tx.execute<{ disable: boolean; since: string }>(sql`
      update webhook_endpoints set failing_since = coalesce(failing_since, now())
      where id = ${row.endpoint_id}::uuid
      returning failing_since <= now() - ${`${cfg.disableAfterS} seconds`}::interval as disable,
        failing_since::text as since`);
    if (!ep?.disable) return;
    const days = Math.round((cfg.disableAfterS / 86400) * 10) / 10;
    const reason = `disabled: every try has failed since ${new Date(ep.since).toISOString()} (${days} days or more); the last: ${result.error ?? "no answer"}`;
    await tx.execute(sql`
      update webhook_endpoints set enabled = false, disabled_reason = ${reason.slice(0, 500)}, updated_at = now()
      where id = ${row.endpoint_id}::uuid and enabled`);
    await failPendingOf(tx, row.endpoint_id, "the endpoint was disabled after failing for too long");
    ctx.log.warn("webhook endpoint disabled", { endpointId: row.endpoint_id, orgId: row.org_id, reason });
  });
}
