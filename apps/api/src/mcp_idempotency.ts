import { writeScopeState } from "@site/db";
import {
  AppError,
  checkIdempotencyKey,
  claimIdempotencyKey,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_LEASE_MS,
  type Principal,
  recordAnswerInWork,
  releaseIdempotencyClaim,
  renewIdempotencyClaim,
  requestHash,
  storeIdempotentAnswer,
} from "@site/domain/core";
import type { AppDeps } from "./deps.ts";
import type { ToolOutput, ToolWork } from "./mcp_tools/tool.ts";

/** A tool's answer as MCP sends it: the note (next step) first, then the value as JSON; the value as structuredContent. */
export type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** The result of a tool's output, as sent and as kept for a keyed call's replay. */
export function toolResultOf({ value, note }: ToolOutput): ToolResult {
  const text = note ? `${note}\n\n${JSON.stringify(value, null, 2)}` : JSON.stringify(value, null, 2);
  return { content: [{ type: "text", text }], structuredContent: value };
}

/**
 * An error about the key in the words of a tool call: REST's `Idempotency-Key` header is the
 * `idempotencyKey` argument here (message and `details` fields), so an agent knows what to change.
 */
export function inToolWords(err: unknown): unknown {
  if (!(err instanceof AppError) || !err.message.includes("Idempotency-Key")) return err;
  const rename = (text: string) => text.replaceAll("Idempotency-Key", "idempotencyKey");
  const details = Array.isArray(err.details)
    ? err.details.map((d: { field?: string }) =>
        typeof d?.field === "string" ? { ...d, field: rename(d.field) } : d,
      )
    : err.details;
  return new AppError(err.code, rename(err.message), details, err.headers);
}

/** A kept answer: status, JSON, the exact bytes of the result. */
const kept = (status: number, result: unknown) => ({
  status,
  headers: { "content-type": "application/json" },
  body: new TextEncoder().encode(JSON.stringify(result)),
});

/**
 * The tools that charge, send or create (decision 1415): they take `idempotencyKey` with the meaning of
 * REST's `Idempotency-Key` and its store. Updates and upserts (update_page, define_collection…) give
 * the same result when repeated and take none.
 */
export const KEYED_TOOLS: ReadonlySet<string> = new Set([
  "create_site",
  "create_page",
  "import_media_from_url",
  "upload_media",
  "queue_screenshot",
  "create_clip",
  "create_screenshot_login_link",
  "create_campaign",
  "send_campaign",
  "send_test_campaign",
  "add_subscriber",
  "create_social_post",
  "add_social_media",
  "generate_social_images",
  "retry_webhook_delivery",
]);

/** The `idempotencyKey` argument as the keyed tools' input schemas show it. */
const KEY_ARGUMENT = {
  type: "string",
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
  description:
    "Optional. A unique key for this call (e.g. a UUID): calling again with the same key and arguments within 24 hours answers the first result without doing the work twice; other arguments under the key are refused (CONFLICT).",
};

/** A tool's JSON input schema with `idempotencyKey` added when the tool takes one. */
export function withKeyArgument(name: string, schema: Record<string, unknown>): Record<string, unknown> {
  if (!KEYED_TOOLS.has(name)) return schema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  return { ...schema, properties: { ...properties, idempotencyKey: KEY_ARGUMENT } };
}

/** The key a call names (only for keyed tools) and its other arguments, which the tool's schema checks. */
export function splitKey(name: string, args: unknown): { key: string | undefined; args: unknown } {
  if (!KEYED_TOOLS.has(name) || typeof args !== "object" || args === null || !("idempotencyKey" in args))
    return { key: undefined, args };
  const { idempotencyKey, ...rest } = args as Record<string, unknown>;
  return { key: typeof idempotencyKey === "string" ? idempotencyKey : String(idempotencyKey), args: rest };
}

/** What a tool call gave: its result and the HTTP status REST would have answered (200, or the error's). */
export type Outcome<R> = { result: R; status: number };

/**
 * Runs a keyed tool call with REST's rules (decisions 0832, 1410–1413): the key is claimed for the API
 * key; the same call again answers the first result; other arguments or a call still running under it
 * throw 409 CONFLICT; results are kept bounded and sealed, a 5xx before the work began and a 429 free
 * the key. An `estimateOnly` call changes nothing and keeps nothing.
 */
export async function keyedToolCall<R>(
  deps: AppDeps,
  principal: Principal,
  call: { name: string; key: string; args: unknown },
  run: (work?: ToolWork) => Promise<Outcome<R>>,
): Promise<R> {
  checkIdempotencyKey(call.key);
  if ((call.args as { estimateOnly?: unknown } | null)?.estimateOnly === true) return (await run()).result;
  const hash = requestHash("TOOL", `/mcp/tools/${call.name}`, JSON.stringify(call.args ?? {}));
  const outcome = await claimIdempotencyKey(
    deps,
    { orgId: principal.orgId, apiKeyId: principal.keyId },
    { key: call.key, hash },
  );
  if (outcome.kind === "conflict") throw outcome.error;
  if (outcome.kind === "replay") return JSON.parse(new TextDecoder().decode(outcome.answer.body)) as R;
  const claim = outcome.claim;
  let recorded = false;
  // The tool's work records its answer in its own transaction (decision 1411, as REST's answerInWork):
  // a crash after that commit leaves the key done with the answer, never free to run the work again.
  const work: ToolWork = {
    inWork:
      <T>(answer: (result: T) => ToolOutput) =>
      async (tx, result: T) => {
        await recordAnswerInWork(deps, tx, claim, kept(200, toolResultOf(answer(result))));
        recorded = true;
      },
  };
  const renew = setInterval(() => {
    renewIdempotencyClaim(deps, claim).catch(() => {});
  }, IDEMPOTENCY_LEASE_MS / 3);
  renew.unref?.();
  const release = () =>
    releaseIdempotencyClaim(deps, claim).catch((err: unknown) =>
      deps.log.warn("could not release an idempotency key", { cause: String(err) }),
    );
  try {
    let done: Outcome<R>;
    try {
      done = await run(work);
    } catch (err) {
      await release();
      throw err;
    }
    const begun = recorded || writeScopeState() === "writing";
    if (done.status === 429 || (done.status >= 500 && !begun)) {
      await release();
      return done.result;
    }
    try {
      await storeIdempotentAnswer(deps, claim, kept(done.status, done.result));
    } catch (err) {
      deps.log.warn("could not keep an idempotent tool result", { cause: String(err) });
      await release();
    }
    return done.result;
  } finally {
    clearInterval(renew);
  }
}
