import { createHash, randomBytes } from "node:crypto";
import { type Database, idempotencyKeys, provisionalWrites, type Tx } from "@site/db";
import { and, eq, gt, lt, not, sql } from "drizzle-orm";
import type { Context } from "./context.ts";
import { AppError } from "./errors.ts";
import { decryptSecretBytes, encryptSecret } from "./secrets.ts";

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

/**
 * Called by a unit of work inside its transaction with its result, so that the request's answer commits
 * with the work or not at all (Stripe's "atomic phases", decision 1411). Throws when the key is no
 * longer the request's (its lease lapsed and a retry took it): the work is then rolled back.
 */
export type InWork<T> = (tx: Tx, result: T) => Promise<void>;

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

/**
 * 409 for a key whose request still holds it. Retry-After says when its lease ends: a live request renews
 * it and may answer sooner, one whose process died frees the key only then (decision 1411).
 */
const stillRunning = (lockedUntil: Date | null, now: Date) =>
  new AppError(
    "CONFLICT",
    "Idempotency-Key: a request with this key is still being processed; retry once it has finished",
    [{ field: "Idempotency-Key", message: "a request with this key is in flight" }],
    {
      "retry-after": String(
        Math.max(1, Math.ceil(((lockedUntil?.getTime() ?? now.getTime()) - now.getTime()) / 1000)),
      ),
    },
  );

/** Why a done key has no answer to give again, in the words of its 409. */
const NOT_KEPT_BECAUSE = {
  too_large: "it was over IDEMPOTENCY_MAX_ANSWER_BYTES",
  org_budget: "the organization's kept answers of the last 24 hours reached IDEMPOTENCY_ORG_BYTES",
  unreadable: "it can no longer be read (SECRET_KEY changed)",
} as const;

/** 409 for a key whose request was done but whose answer was not kept (decision 1410): it runs nothing again. */
const notKept = (why: keyof typeof NOT_KEPT_BECAUSE) =>
  new AppError(
    "CONFLICT",
    `Idempotency-Key: the request with this key was already done, but its answer was not kept (${NOT_KEPT_BECAUSE[why]}); it is not run again. Read its result, or send a new key to run it again`,
    [{ field: "Idempotency-Key", message: "done; its answer was not kept" }],
  );

/** A kept body as stored: sealed with SECRET_KEY (decision 1412), or base64 in rows kept before that. */
function openBody(secretKey: string, stored: string): Uint8Array {
  if (stored.startsWith("v1.")) return new Uint8Array(decryptSecretBytes(secretKey, stored));
  return new Uint8Array(Buffer.from(stored, "base64"));
}

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
      answerBytes: 0,
      notKept: null,
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
    if (row.state === "in_flight") return { kind: "conflict", error: stillRunning(row.lockedUntil, now) };
    if (row.notKept || row.responseBody === null)
      return { kind: "conflict", error: notKept(row.notKept ?? "too_large") };
    let body: Uint8Array;
    try {
      body = openBody(ctx.config.secretKey, row.responseBody);
    } catch {
      return { kind: "conflict", error: notKept("unreadable") };
    }
    return {
      kind: "replay",
      answer: { status: row.responseStatus ?? 200, headers: row.responseHeaders ?? {}, body },
    };
  }
  return { kind: "conflict", error: stillRunning(null, ctx.clock.now()) };
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

/** What an answer weighs for the bounds (decision 1410): its body and kept headers, as sent. */
export function answerBytes(answer: StoredAnswer): number {
  let n = answer.body.byteLength;
  for (const [name, value] of Object.entries(answer.headers))
    n += Buffer.byteLength(name) + Buffer.byteLength(value);
  return n;
}

/**
 * Marks the claimed key done with its answer, on `db` (a work's own transaction, or the pool): sealed
 * with SECRET_KEY, unless it is over IDEMPOTENCY_MAX_ANSWER_BYTES or the organization's kept answers of
 * the last 24 hours would pass IDEMPOTENCY_ORG_BYTES; then only the fact that the work was done is kept
 * (decision 1410). `final`: the claim ends (else the request still holds it, to write its final answer
 * over this one). Returns whether the key was still the request's.
 */
async function keepAnswer(
  ctx: Context,
  db: Database | Tx,
  claim: IdempotencyClaim,
  answer: StoredAnswer,
  final: boolean,
): Promise<boolean> {
  const bounds = ctx.config.idempotency;
  const bytes = answerBytes(answer);
  let why: "too_large" | "org_budget" | null = bytes > bounds.maxAnswerBytes ? "too_large" : null;
  if (!why) {
    const since = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const [used] = await db
      .select({ n: sql<string>`coalesce(sum(${idempotencyKeys.answerBytes}), 0)` })
      .from(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.orgId, claim.orgId),
          gt(idempotencyKeys.createdAt, since),
          not(and(eq(idempotencyKeys.apiKeyId, claim.apiKeyId), eq(idempotencyKeys.key, claim.key))!),
        ),
      );
    if (Number(used?.n ?? 0) + bytes > bounds.orgBytesPerDay) why = "org_budget";
  }
  const done = await db
    .update(idempotencyKeys)
    .set({
      state: "done",
      ...(final ? { token: null, lockedUntil: null } : {}),
      responseStatus: answer.status,
      responseHeaders: why ? null : answer.headers,
      responseBody: why ? null : encryptSecret(ctx.config.secretKey, answer.body),
      answerBytes: why ? 0 : bytes,
      notKept: why,
    })
    .where(ownedBy(claim))
    .returning({ key: idempotencyKeys.key });
  return done.length > 0;
}

/** Keeps the answer of the claimed request, to give again for the rest of the key's 24 hours. */
export async function storeIdempotentAnswer(
  ctx: Context,
  claim: IdempotencyClaim,
  answer: StoredAnswer,
): Promise<void> {
  await keepAnswer(ctx, ctx.db, claim, answer, true);
}

/**
 * Inside the transaction that does the request's work: records its answer there, so that a crash leaves
 * both or neither (decision 1411). The request still holds the key and writes its final answer over this
 * one when it answers. A key no longer the request's (its lease lapsed and a retry took it) throws
 * 409 CONFLICT, and the work rolls back: the retry does it instead.
 */
export async function recordAnswerInWork(
  ctx: Context,
  tx: Tx,
  claim: IdempotencyClaim,
  answer: StoredAnswer,
): Promise<void> {
  if (!(await keepAnswer(ctx, tx, claim, answer, false)))
    throw new AppError(
      "CONFLICT",
      "Idempotency-Key: this request lost its key to a retry while it ran (its lease lapsed); nothing was done by it",
      [{ field: "Idempotency-Key", message: "taken over by a retry" }],
    );
}

/**
 * Frees the key (the request failed before its work began, in a way a retry may fix): the next request
 * with it runs. A key whose work already recorded its answer stays done.
 */
export async function releaseIdempotencyClaim(ctx: Context, claim: IdempotencyClaim): Promise<void> {
  await provisionalWrites(() =>
    ctx.db.delete(idempotencyKeys).where(and(ownedBy(claim), eq(idempotencyKeys.state, "in_flight"))),
  );
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
