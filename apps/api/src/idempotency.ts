import { writeScopeState } from "@site/db";
import {
  type Context,
  checkIdempotencyKey,
  claimIdempotencyKey,
  IDEMPOTENCY_LEASE_MS,
  type IdempotencyClaim,
  type InWork,
  recordAnswerInWork,
  releaseIdempotencyClaim,
  renewIdempotencyClaim,
  requestHash,
  type StoredAnswer,
  storeIdempotentAnswer,
  sweepIdempotencyKeys,
} from "@site/domain/core";
import { Elysia } from "elysia";
import type { PrincipalCache } from "./auth.ts";

/** The header a client names a retryable request with, and the one a replayed answer carries. */
export const IDEMPOTENCY_HEADER = "idempotency-key";
export const REPLAYED_HEADER = "idempotent-replayed";

/** Headers of an answer that are part of it (kept and replayed); per-request ones (ids, limits) are not. */
const KEPT_HEADERS = [
  "content-type",
  "content-language",
  "location",
  "etag",
  "last-modified",
  "cache-control",
];

/** How often a process deletes keys past their 24 hours (one bounded delete, from a request's claim). */
const SWEEP_EVERY_MS = 60_000;

/**
 * POSTs that change nothing (decision 1413): link translation reads only, and an `estimateOnly` screenshot
 * or clip prices without charging. Their keys are not claimed and their answers not kept: a second call
 * with the key runs again, which is the same answer at no cost.
 */
const SIDE_EFFECT_FREE: { path: RegExp; when?: (body: unknown) => boolean }[] = [
  { path: /^\/api\/v1\/sites\/[^/]+\/links\/translate$/ },
  { path: /^\/api\/v1\/sites\/[^/]+\/media\/screenshot$/, when: (b) => estimateOnly(b) },
  { path: /^\/api\/v1\/social\/media\/clips$/, when: (b) => estimateOnly(b) },
];

function estimateOnly(body: unknown): boolean {
  return (
    typeof body === "object" && body !== null && (body as { estimateOnly?: unknown }).estimateOnly === true
  );
}

/** Whether a validated request is one of the side-effect-free POSTs. */
function changesNothing(pathname: string, body: unknown): boolean {
  return SIDE_EFFECT_FREE.some((op) => op.path.test(pathname) && (op.when?.(body) ?? true));
}

/** A claim a request holds while it runs, with what its work has recorded. */
type Held = {
  ctx: Context;
  claim: IdempotencyClaim;
  renew: ReturnType<typeof setInterval>;
  recorded: boolean;
};

// By request: the hooks hold a claim, a route hands it to its work through answerInWork.
const held = new WeakMap<Request, Held>();

/** Whether a request takes part: a POST under /api/v1 naming a key (the tool protocol at /mcp does not). */
function takesPart(request: Request): boolean {
  return (
    request.method === "POST" &&
    request.headers.has(IDEMPOTENCY_HEADER) &&
    new URL(request.url).pathname.startsWith("/api/v1/")
  );
}

/** The request's body as the route received it, for the hash: parsed JSON as sent, text, or raw bytes. */
async function bodyBytes(request: Request, body: unknown): Promise<Uint8Array | string> {
  if (body === undefined || body === null) {
    // A route that parses its own body (`parse: "none"`) has not read it yet.
    if (request.body && !request.bodyUsed) return new Uint8Array(await request.clone().arrayBuffer());
    return "";
  }
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return JSON.stringify(body);
}

/** The answer Elysia would send for a handler's value, built here so that what is kept is what is sent. */
function answerOf(
  value: unknown,
  set: { status?: number | string; headers: Record<string, unknown> },
): Response {
  if (value instanceof Response) return value;
  const headers = new Headers();
  for (const [name, v] of Object.entries(set.headers)) if (v !== undefined) headers.set(name, String(v));
  const status = typeof set.status === "number" ? set.status : 200;
  if (value === undefined || value === null) return new Response(null, { status, headers });
  if (typeof value === "string") {
    if (!headers.has("content-type")) headers.set("content-type", "text/plain; charset=utf-8");
    return new Response(value, { status, headers });
  }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer || value instanceof Blob)
    return new Response(value as BodyInit, { status, headers });
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Response(JSON.stringify(value), { status, headers });
}

/** What is kept of an answer: status, the headers that are part of it, the exact body. */
async function keptOf(answer: Response): Promise<StoredAnswer> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = answer.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  return { status: answer.status, headers, body: new Uint8Array(await answer.clone().arrayBuffer()) };
}

/**
 * For a route whose work commits in one transaction: what that work calls inside it with its result, so
 * that the answer (`status`, `shape(result)` as JSON, as the route answers it) commits with the work
 * (Stripe's atomic phases, decision 1411). Undefined when the request holds no key.
 */
export function answerInWork<T>(
  request: Request,
  status: number,
  shape: (result: T) => unknown,
): InWork<T> | undefined {
  const h = held.get(request);
  if (!h) return undefined;
  return async (tx, result) => {
    const answer = await keptOf(answerOf(shape(result), { status, headers: {} }));
    await recordAnswerInWork(h.ctx, tx, h.claim, answer);
    h.recorded = true;
  };
}

/**
 * `Idempotency-Key` on every authenticated POST under /api/v1, with Stripe's semantics (decision 0832):
 * after authentication and validation the key is claimed for the calling API key; the same key and
 * request again answers the first answer (with `Idempotent-Replayed: true`) without running the
 * handler; another request with the key, or one while the first still runs, answers 409 CONFLICT.
 * Answers are kept for 24 hours, bounded and sealed (decisions 1410, 1412), except 429 (it says to come
 * back later) and a 5xx before the work began (nothing was written: a retry may succeed); a 5xx after
 * it began is kept like any other (Stripe's rule). Side-effect-free POSTs keep nothing (1413). Public
 * routes (no key to scope by) ignore the header.
 */
export function idempotencyHooks(ctx: Context, principals: PrincipalCache) {
  let lastSweep = 0;
  const let_go = (request: Request) => {
    const h = held.get(request);
    if (!h) return null;
    held.delete(request);
    clearInterval(h.renew);
    return h;
  };
  const release = (claim: IdempotencyClaim) =>
    releaseIdempotencyClaim(ctx, claim).catch((err: unknown) =>
      // The claim lapses by itself within IDEMPOTENCY_LEASE_MS.
      ctx.log.warn("could not release an idempotency key", { cause: String(err) }),
    );
  const claimFor = async (request: Request, body: unknown): Promise<Response | undefined> => {
    const principal = await principals.peek(request);
    if (!principal) return;
    const key = request.headers.get(IDEMPOTENCY_HEADER)!;
    checkIdempotencyKey(key);
    const url = new URL(request.url);
    if (changesNothing(url.pathname, body)) return;
    const hash = requestHash(request.method, url.pathname + url.search, await bodyBytes(request, body));
    const outcome = await claimIdempotencyKey(
      ctx,
      { orgId: principal.orgId, apiKeyId: principal.keyId },
      { key, hash },
    );
    if (outcome.kind === "conflict") throw outcome.error;
    if (outcome.kind === "replay") {
      const { status, headers, body: bytes } = outcome.answer;
      return new Response(bytes.byteLength > 0 ? (bytes as BodyInit) : null, {
        status,
        headers: { ...headers, [REPLAYED_HEADER]: "true" },
      });
    }
    const claim = outcome.claim;
    const renew = setInterval(() => {
      renewIdempotencyClaim(ctx, claim).catch(() => {});
    }, IDEMPOTENCY_LEASE_MS / 3);
    renew.unref?.();
    held.set(request, { ctx, claim, renew, recorded: false });
    if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = Date.now();
      sweepIdempotencyKeys(ctx).catch((err: unknown) =>
        ctx.log.warn("could not sweep idempotency keys", { cause: String(err) }),
      );
    }
  };
  const settle = async (h: Held, answer: Response): Promise<Response> => {
    const claim = h.claim;
    // The work began once a durable write was sent (decision 0820's write scope) or it recorded its answer.
    const begun = h.recorded || writeScopeState() === "writing";
    if (answer.status === 429 || (answer.status >= 500 && !begun)) {
      await release(claim);
      return answer;
    }
    try {
      await storeIdempotentAnswer(ctx, claim, await keptOf(answer));
    } catch (err) {
      ctx.log.warn("could not keep an idempotent answer", { cause: String(err) });
      await release(claim);
    }
    return answer;
  };
  // Both hooks stay synchronous for the requests that do not take part (every read, every other POST).
  return new Elysia({ name: "idempotency" })
    .onBeforeHandle({ as: "global" }, ({ request, body }) =>
      takesPart(request) ? claimFor(request, body) : undefined,
    )
    .mapResponse({ as: "global" }, ({ request, responseValue, set }) => {
      const h = let_go(request);
      return h ? settle(h, answerOf(responseValue, set as never)) : undefined;
    })
    .onAfterResponse({ as: "global" }, ({ request }) => {
      // An answer that never passed mapResponse (a failure inside Elysia): free its key.
      const h = let_go(request);
      if (h) void release(h.claim);
    });
}
