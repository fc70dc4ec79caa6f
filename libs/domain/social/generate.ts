import { imageGenerations } from "@site/db";
import {
  AppError,
  debitCredits,
  type Principal,
  recordDebit,
  refundOnce,
  validationError,
} from "@site/domain/core";
import { type MediaContext, pixelRefusal, sniffMedia } from "@site/domain/media";
import { and, eq } from "drizzle-orm";
import { addSocialFile } from "./media.ts";
import type { GenerateImageBody, SocialMediaView } from "./models.ts";

/** How long the image provider may take for one request (generation takes tens of seconds). */
const PROVIDER_TIMEOUT_MS = 120_000;

/**
 * Asks an OpenAI-compatible images endpoint (`POST {IMAGE_API_BASE}/images/generations`,
 * https://platform.openai.com/docs/api-reference/images/create) for `n` images; each comes back as
 * `b64_json` (gpt-image-1 always, DALL·E and compatible servers when asked) or a `url` to fetch.
 */
async function callProvider(
  ctx: MediaContext,
  input: { prompt: string; size: string; n: number },
): Promise<Uint8Array[]> {
  const cfg = ctx.config.image;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (cfg.apiKey) headers.authorization = `Bearer ${cfg.apiKey}`;
  let res: Response;
  try {
    res = await fetch(`${cfg.apiBase!.replace(/\/$/, "")}/images/generations`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: cfg.model, prompt: input.prompt, n: input.n, size: input.size }),
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
  } catch (err) {
    throw new Error(
      `the image provider could not be reached (${(err as Error).name === "TimeoutError" ? "timed out" : String((err as Error).message)})`,
    );
  }
  const text = await res.text();
  let body: { data?: { b64_json?: string; url?: string }[]; error?: { message?: string; code?: string } } =
    {};
  try {
    body = JSON.parse(text);
  } catch {}
  if (!res.ok)
    throw new Error(
      `the image provider answered ${res.status}${body.error?.message ? `: ${body.error.message}` : ""}`,
    );
  const data = body.data ?? [];
  if (data.length !== input.n)
    throw new Error(`the image provider returned ${data.length} images, ${input.n} asked`);
  const out: Uint8Array[] = [];
  for (const d of data) {
    if (d.b64_json) out.push(new Uint8Array(Buffer.from(d.b64_json, "base64")));
    else if (d.url?.startsWith("https://") || d.url?.startsWith("http://")) {
      const img = await fetch(d.url, { signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
      if (!img.ok) throw new Error(`the generated image could not be fetched (${img.status})`);
      out.push(new Uint8Array(await img.arrayBuffer()));
    } else throw new Error("the image provider answered an image without b64_json or url");
  }
  return out;
}

/** Fails a pending generation and refunds its credits exactly once (the ledger is unique per id and reason). */
export async function failGeneration(ctx: MediaContext, id: string, error: string): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(imageGenerations)
      .set({ status: "failed", error: error.slice(0, 500) })
      .where(and(eq(imageGenerations.id, id), eq(imageGenerations.status, "pending")))
      .returning({ orgId: imageGenerations.orgId, credits: imageGenerations.credits });
    if (!row) return false;
    return refundOnce(tx, { orgId: row.orgId, amount: row.credits, reason: "image_refund", subjectId: id });
  });
}

/**
 * Generates images into the social library. Without IMAGE_API_BASE: 501 NOT_CONFIGURED before any
 * charge. Then, in ONE transaction, the credits (IMAGE_CREDITS_PER_IMAGE × n) are debited only if the
 * balance covers them (402 QUOTA_EXCEEDED otherwise; concurrent requests can never take it below 0) and
 * the request is recorded. A provider failure, bytes that are not an accepted image, or a full storage
 * quota fail the request and refund its credits exactly once (502 RENDERER_ERROR, or the quota's 403).
 */
export async function generateImages(
  ctx: MediaContext,
  principal: Principal,
  input: GenerateImageBody,
): Promise<{ media: SocialMediaView[]; creditsCharged: number }> {
  const cfg = ctx.config.image;
  if (!cfg.apiBase)
    throw new AppError(
      "NOT_CONFIGURED",
      "image generation is not configured on this server (no IMAGE_API_BASE)",
    );
  const prompt = input.prompt.trim();
  if (!prompt) throw validationError("prompt", "required");
  const n = input.n ?? 1;
  const size = input.size ?? "1024x1024";
  const cost = cfg.creditsPerImage * n;
  const id = await ctx.db.transaction(async (tx) => {
    await debitCredits(tx, principal.orgId, cost, `${n} image${n === 1 ? "" : "s"} cost ${cost}`);
    const [row] = await tx
      .insert(imageGenerations)
      .values({ orgId: principal.orgId, prompt, n, size, credits: cost })
      .returning({ id: imageGenerations.id });
    await recordDebit(tx, {
      orgId: principal.orgId,
      amount: cost,
      reason: "image_debit",
      subjectId: row!.id,
    });
    return row!.id;
  });
  const media: SocialMediaView[] = [];
  try {
    const images = await callProvider(ctx, { prompt, size, n });
    // Every image must pass the uploads' magic-byte check before any lands in the library.
    if (images.some((b) => sniffMedia(b)?.kind !== "image"))
      throw new Error("the image provider answered something that is not a JPEG, PNG, WebP or GIF image");
    if (images.some((b) => pixelRefusal(sniffMedia(b), ctx.config.limits.mediaMaxPixels)))
      throw new Error("the image provider answered an image over MEDIA_MAX_PIXELS");
    for (const bytes of images) media.push(await addSocialFile(ctx, principal.orgId, bytes, "generated"));
    await ctx.db.update(imageGenerations).set({ status: "succeeded" }).where(eq(imageGenerations.id, id));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await failGeneration(ctx, id, message);
    ctx.log.warn("image generation failed; credits refunded", { generationId: id, cause: message });
    if (err instanceof AppError && err.code === "FORBIDDEN") throw err;
    throw new AppError("RENDERER_ERROR", `${message}; the ${cost} credits were refunded`);
  }
  return { media, creditsCharged: cost };
}
