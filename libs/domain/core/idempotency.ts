import { createHash, randomBytes } from "node:crypto";
import { idempotencyKeys, provisionalWrites } from "@site/db";
import { and, eq, lt, sql } from "drizzle-orm";
import type { Context } from "./context.ts";
import { AppError } from "./errors.ts";

/** How long an answer is given again for its key (Stripe's 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** The longest `Idempotency-Key` accepted. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/**
 * How long a claim holds without news from its request. The request renews it while it runs, so a
 * long one (a template clone) keeps it, and one whose process died frees it within a minute.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

/** Who a key belongs to: one API key of one organization. */
export type IdempotencyScope = { orgId: string; apiKeyId: string };

/** A key this request holds while it runs; `token` proves it is still this request's. */
export type IdempotencyClaim = IdempotencyScope & { key: string; token: string };

/** An answer kept for replay: status, the headers that matter, the exact body. */
export type StoredAnswer = { status: number; headers: Record<string, string>; body: Uint8Array };

/** What a request with a key may do: run (holding the claim), give the stored answer again, or neither. */
export type ClaimOutcome =
  | { kind: "claimed"; claim: IdempotencyClaim }
  | { kind: "replay"; answer: StoredAnswer }
  | { kind: "conflict"; error: AppError };

/** 400 VALIDATION_ERROR unless the header is 1 to 255 printable ASCII characters. */
export function checkIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x20-\x7e]+$/.test(key))
    throw new AppError(
      "VALIDATION_ERROR",
      `Idempotency-Key: 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`,
      [
        {
          field: "Idempotency-Key",
          message: `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`,
        },
      ],
    );
}

/** The hash that says whether two requests are the same one: method, path with query, body. */
export function requestHash(method: string, pathAndQuery: string, body: Uint8Array | string): string {
  return createHash("sha256").update(`${method.toUpperCase()}\n${pathAndQuery}\n`).update(body).digest("hex");
}

const otherRequest = () =>
  new AppError(
    "CONFLICT",
    "Idempotency-Key: this key was already used with another request (method, path or body); use a new key for a new request",
    [{ field: "Idempotency-Key", message: "used with another request" }],
  );

const stillRunning = () =>
  new AppError(
    "CONFLICT",
    "Idempotency-Key: a request with this key is still being processed; retry once it has finished",
    [{ field: "Idempotency-Key", message: "a request with this key is in flight" }],
    { "retry-after": "1" },
  );

/**
 * Claims `key` for a request (decision 0832). Free (never used, expired after 24 h, or a claim whose
 * request stopped renewing it with the same request): claimed, the request runs. Answered before with
 * the same request: the stored answer. Used with another request, or its request still running: 409.
 * The claim is a provisional write: it lapses by itself, so it commits a request to nothing.
 */
export async function claimIdempotencyKey(
  ctx: Context,
  scope: IdempotencyScope,
  input: { key: string; hash: string },
): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = ctx.clock.now();
    const token = randomBytes(12).toString("base64url");
    const fresh = {
      orgId: scope.orgId,
      requestHash: input.hash,
      state: "in_flight" as const,
      token,
      lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
      responseStatus: null,
      responseHeaders: null,
      responseBody: null,
      createdAt: now,
    };
    const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
    const taken = await provisionalWrites(() =>
      ctx.db
        .insert(idempotencyKeys)
        .values({ apiKeyId: scope.apiKeyId, key: input.key, ...fresh })
        .onConflictDoUpdate({
          target: [idempotencyKeys.apiKeyId, idempotencyKeys.key],
          set: fresh,
          setWhere: sql`${idempotencyKeys.createdAt} <= ${expiredBefore.toISOString()}::timestamptz or (${idempotencyKeys.state} = 'in_flight' and ${idempotencyKeys.lockedUntil} <= ${now.toISOString()}::timestamptz and ${idempotencyKeys.requestHash} = ${input.hash})`,
        })
        .returning({ token: idempotencyKeys.token }),
    );
    if (taken[0]?.token === token) return { kind: "claimed", claim: { ...scope, key: input.key, token } };
    const [row] = await ctx.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.apiKeyId, scope.apiKeyId), eq(idempotencyKeys.key, input.key)));
    // Released between the two statements (its request failed): try to claim it again.
    if (!row) continue;
    if (row.requestHash !== input.hash) return { kind: "conflict", error: otherRequest() };
    if (row.state === "in_flight") return { kind: "conflict", error: stillRunning() };
    return {
      kind: "replay",
      answer: {
        status: row.responseStatus ?? 200,
        headers: row.responseHeaders ?? {},
        body: new Uint8Array(Buffer.from(row.responseBody ?? "", "base64")),
      },
    };
  }
  return { kind: "conflict", error: stillRunning() };
}

const ownedBy = (claim: IdempotencyClaim) =>
  and(
    eq(idempotencyKeys.apiKeyId, claim.apiKeyId),
    eq(idempotencyKeys.key, claim.key),
    eq(idempotencyKeys.token, claim.token),
  );

/** Extends the claim's lease while its request runs (provisional, like the claim). */
export async function renewIdempotencyClaim(ctx: Context, claim: IdempotencyClaim): Promise<void> {
  const lockedUntil = new Date(ctx.clock.now().getTime() + IDEMPOTENCY_LEASE_MS);
  await provisionalWrites(() =>
    ctx.db
      .update(idempotencyKeys)
      .set({ lockedUntil })
      .where(and(ownedBy(claim), eq(idempotencyKeys.state, "in_flight"))),
  );
}

/** Keeps the answer of the claimed request, to give again for the rest of the key's 24 hours. */
export async function storeIdempotentAnswer(
  ctx: Context,
  claim: IdempotencyClaim,
  answer: StoredAnswer,
): Promise<void> {
  await ctx.db
    .update(idempotencyKeys)
    .set({
      state: "done",
      token: null,
      lockedUntil: null,
      responseStatus: answer.status,
      responseHeaders: answer.headers,
      responseBody: Buffer.from(answer.body).toString("base64"),
    })
    .where(ownedBy(claim));
}

/** Frees the key (the request failed in a way a retry may fix): the next request with it runs. */
export async function releaseIdempotencyClaim(ctx: Context, claim: IdempotencyClaim): Promise<void> {
  await provisionalWrites(() => ctx.db.delete(idempotencyKeys).where(ownedBy(claim)));
}

/** Deletes keys past their 24 hours, at most `limit` at a time; returns how many. */
export async function sweepIdempotencyKeys(ctx: Context, limit = 1000): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
  const gone = await provisionalWrites(() =>
    ctx.db.execute(
      sql`delete from ${idempotencyKeys} where ctid in (select ctid from ${idempotencyKeys} where ${lt(idempotencyKeys.createdAt, before)} limit ${limit})`,
    ),
  );
  return (gone as unknown as { count?: number }).count ?? 0;
}
