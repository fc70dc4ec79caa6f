import type { Context } from "@site/domain/core";
import { GuardedFetchError, guardedFetchStream } from "@site/net";
import type { WebhookDeliveryPayload } from "@site/queue";
import { sql } from "drizzle-orm";
import { failPendingOf, signingSecrets } from "./endpoints.ts";
import { observeTry, type TryOutcome } from "./metrics.ts";
import { retryAfterMs } from "./retry_after.ts";
import { settleTry, type TryAnswer } from "./settle.ts";
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
 * answer, and settles the row (settleTry): delivered on 2xx; 410 Gone disables the endpoint; else the
 * next try per WEBHOOK_RETRY_SCHEDULE_S (with jitter; a 429/503's Retry-After honoured within its longest
 * step) or failed once the schedule is spent. `status` is always the receiver's, a 3xx included (a
 * redirect is never followed). An endpoint failing for WEBHOOK_DISABLE_AFTER_S is disabled with the reason.
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
  await settleTry(ctx, row, job.leaseToken, result);
  return { outcome: result.outcome, status: result.status, error: result.error };
}

async function post(
  ctx: Context,
  url: string,
  body: string,
  headers: Record<string, string>,
  tls: { ca?: string | string[] } | undefined,
): Promise<TryAnswer> {
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
      return { outcome: "delivered", status: res.status, error: null, retryAfterMs: null };
    // Standard Webhooks 1.0, "Delivery success and failure": a 3xx is a failure, never followed.
    const error =
      res.status >= 300 && res.status < 400
        ? `the receiver answered HTTP ${res.status}, a redirect; redirects are not followed (give the final URL)`
        : `the receiver answered HTTP ${res.status}`;
    return {
      outcome: "http_error",
      status: res.status,
      error,
      retryAfterMs: retryAfterMs(res.headers["retry-after"], ctx.clock.now()),
    };
  } catch (err) {
    if (!(err instanceof GuardedFetchError))
      return {
        outcome: "network",
        status: null,
        error: String((err as Error)?.message ?? err).slice(0, 300),
        retryAfterMs: null,
      };
    const outcome: TryOutcome =
      err.kind === "timeout"
        ? "timeout"
        : err.kind === "blocked" || err.kind === "invalid_url"
          ? "refused"
          : "network";
    return { outcome, status: null, error: err.message.slice(0, 300), retryAfterMs: null };
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
