import { type Tx, webhookEndpoints } from "@site/db";
import {
  AppError,
  type Context,
  decryptSecret,
  encryptSecret,
  isUuid,
  notFound,
  type Principal,
  validationError,
} from "@site/domain/core";
import { checkFetchTarget, GuardedFetchError, resolvePinned, TargetError } from "@site/net";
import { and, asc, eq, sql } from "drizzle-orm";
import { recordEvent } from "./events.ts";
import type { WebhookCreateBody, WebhookEventType, WebhookPatchBody, WebhookView } from "./models.ts";
import { newWebhookSecret } from "./signing.ts";

/** How long a rotated-out secret keeps signing beside the new one (CONTRACT: 24 h). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** Endpoints an organization may have (decision 0842). */
export const MAX_ENDPOINTS_PER_ORG = 20;

type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** The endpoint as the API shows it: never its secret. */
export function webhookView(row: EndpointRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEventType[],
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Checks a receiver URL with the URL import's guard (decision 0303): https (plain http only to a
 * FETCH_ALLOW_HOSTS host), no credentials, no private or local address, literal or resolved. A name
 * that does not resolve now is accepted (its tries fail and are retried); one resolving to a private
 * address is refused. Every try checks again and pins the address it checked.
 */
export async function checkReceiverUrl(ctx: Context, raw: string): Promise<string> {
  const opts = {
    localNetwork: ctx.config.allowLocalNetworkForDevelopment,
    plainHttpToExempt: true,
  };
  try {
    const target = checkFetchTarget(raw, ctx.config.fetchAllowHosts, opts);
    await resolvePinned(target).catch((err) => {
      if (err instanceof GuardedFetchError && (err.kind === "blocked" || err.kind === "invalid_url"))
        throw new TargetError("blocked", err.message);
    });
    return target.url.toString();
  } catch (err) {
    if (err instanceof TargetError) throw validationError("url", err.message);
    throw err;
  }
}

/** Creates an endpoint; its secret is in this answer only. 400 for a guarded URL, 409 past the cap. */
export async function createWebhook(
  ctx: Context,
  principal: Principal,
  body: WebhookCreateBody,
): Promise<{ webhook: WebhookView; secret: string }> {
  const url = await checkReceiverUrl(ctx, body.url);
  const secret = newWebhookSecret();
  const row = await ctx.db.transaction(async (tx) => {
    // One count per organization at a time: concurrent creates cannot pass the cap together.
    await tx.execute(sql`select pg_advisory_xact_lock(840, hashtext(${principal.orgId}))`);
    const [{ n }] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.orgId, principal.orgId));
    if (n >= MAX_ENDPOINTS_PER_ORG)
      throw new AppError(
        "CONFLICT",
        `an organization may have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints; delete one first`,
      );
    const [created] = await tx
      .insert(webhookEndpoints)
      .values({
        orgId: principal.orgId,
        url,
        events: [...new Set(body.events)],
        description: body.description ?? null,
        secret: encryptSecret(ctx.config.secretKey, secret),
      })
      .returning();
    return created!;
  });
  return { webhook: webhookView(row), secret };
}

/** The organization's endpoints, oldest first. */
export async function listWebhooks(ctx: Context, principal: Principal): Promise<WebhookView[]> {
  const rows = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.orgId, principal.orgId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  return rows.map(webhookView);
}

/** One endpoint row of the caller's organization; 404 for another organization's or an unknown id. */
export async function ownWebhook(ctx: Context, principal: Principal, id: string): Promise<EndpointRow> {
  if (!isUuid(id)) throw notFound("webhook");
  const [row] = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, principal.orgId)));
  if (!row) throw notFound("webhook");
  return row;
}

/** One endpoint as the API shows it. */
export async function getWebhook(ctx: Context, principal: Principal, id: string): Promise<WebhookView> {
  return webhookView(await ownWebhook(ctx, principal, id));
}

/**
 * Changes an endpoint. Enabling clears when and why it was disabled and its failure clock; disabling
 * fails its pending deliveries (they can be retried once it is enabled again: decision 0842) and tells
 * the organization's other endpoints (webhook.endpoint.disabled, decision 1402).
 */
export async function updateWebhook(
  ctx: Context,
  principal: Principal,
  id: string,
  body: WebhookPatchBody,
): Promise<WebhookView> {
  await ownWebhook(ctx, principal, id);
  const url = body.url === undefined ? undefined : await checkReceiverUrl(ctx, body.url);
  const row = await ctx.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(webhookEndpoints)
      .set({
        ...(url !== undefined ? { url } : {}),
        ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.enabled === true
          ? { enabled: true, disabledReason: null, disabledAt: null, failingSince: null }
          : {}),
        updatedAt: sql`now()`,
      })
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, principal.orgId)))
      .returning();
    if (!updated) throw notFound("webhook");
    if (body.enabled !== false) return updated;
    // Already disabled: it keeps when and why, and nobody is told twice.
    const disabled = await disableEndpoint(tx, id, {
      reason: "disabled with PATCH enabled: false",
      pendingWhy: "the endpoint was disabled",
      at: ctx.clock.now(),
    });
    return disabled ?? updated;
  });
  return webhookView(row);
}

/**
 * Disables an endpoint IN THE CALLER'S TRANSACTION, for any reason (a PATCH, a 410 Gone from the
 * receiver, failing for WEBHOOK_DISABLE_AFTER_S): records when and why, fails its pending deliveries
 * with `pendingWhy`, and records `webhook.endpoint.disabled` (data: the endpoint as its GET answers it)
 * for the organization's other enabled endpoints subscribed to it (CONTRACT "Webhooks, second pass";
 * decision 1402). Does nothing to an endpoint already disabled (null), so nobody is told twice.
 */
export async function disableEndpoint(
  tx: Tx,
  endpointId: string,
  why: { reason: string; pendingWhy: string; at: Date },
): Promise<EndpointRow | null> {
  const [row] = await tx
    .update(webhookEndpoints)
    .set({
      enabled: false,
      disabledReason: why.reason.slice(0, 500),
      disabledAt: why.at,
      updatedAt: sql`now()`,
    })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.enabled, true)))
    .returning();
  if (!row) return null;
  await failPendingOf(tx, endpointId, why.pendingWhy);
  await recordEvent(tx, { orgId: row.orgId, type: "webhook.endpoint.disabled", data: webhookView(row) });
  return row;
}

/** Fails every pending delivery of an endpoint with `why` (inside the caller's transaction). */
export async function failPendingOf(
  tx: Pick<Context["db"], "execute">,
  endpointId: string,
  why: string,
): Promise<void> {
  await tx.execute(sql`
    update webhook_deliveries set status = 'failed', last_error = ${why}, next_attempt_at = null,
      lease_until = null, lease_token = null, updated_at = now()
    where endpoint_id = ${endpointId}::uuid and status = 'pending'`);
}

/** Deletes an endpoint and its delivery log; 404 when not the caller's. */
export async function deleteWebhook(ctx: Context, principal: Principal, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("webhook");
  const gone = await ctx.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, principal.orgId)))
    .returning({ id: webhookEndpoints.id });
  if (gone.length === 0) throw notFound("webhook");
}

/**
 * A new secret for an endpoint, shown once. The current one becomes the previous one and keeps
 * signing beside it for 24 hours, so receivers can switch without losing a delivery; a previous
 * secret still in its overlap is dropped (only two sign at once).
 */
export async function rotateWebhookSecret(
  ctx: Context,
  principal: Principal,
  id: string,
): Promise<{ secret: string; previousSecretExpiresAt: string }> {
  const row = await ownWebhook(ctx, principal, id);
  const secret = newWebhookSecret();
  const until = new Date(ctx.clock.now().getTime() + ROTATION_OVERLAP_MS);
  const [updated] = await ctx.db
    .update(webhookEndpoints)
    .set({
      secret: encryptSecret(ctx.config.secretKey, secret),
      previousSecret: row.secret,
      previousSecretExpiresAt: until,
      updatedAt: sql`now()`,
    })
    // Conditional on the secret read: two racing rotations cannot both keep a "previous" one.
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.secret, row.secret)))
    .returning({ id: webhookEndpoints.id });
  if (!updated) throw new AppError("CONFLICT", "the secret was rotated concurrently; try again");
  return { secret, previousSecretExpiresAt: until.toISOString() };
}

/** The secrets a try is signed with now: the current one, and the previous one during its overlap. */
export function signingSecrets(
  secretKey: string,
  row: Pick<EndpointRow, "secret" | "previousSecret" | "previousSecretExpiresAt">,
  now: Date,
): string[] {
  const out = [decryptSecret(secretKey, row.secret)];
  if (row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now)
    out.push(decryptSecret(secretKey, row.previousSecret));
  return out;
}
