import { GuardedFetchError, guardedFetchStream } from "@site/net";
import { StoreError } from "@site/storage";
import { usageEvents } from "@site/db";
import { AppError } from "./errors.ts";
import { addLibraryStream, type LibraryEntry, type MediaContext } from "./media_library.ts";
import { countRecentEvents, uploadCapError } from "./media_quota.ts";

/** Test hook: extra CA certificates the guarded fetch trusts in-process (production leaves it unset). */
export type ImportOptions = { tls?: { ca?: string | string[] } };

function fetchError(err: GuardedFetchError, maxBytes: number): AppError {
  switch (err.kind) {
    case "blocked":
      return new AppError("BLOCKED_HOST", `url: ${err.message}`, [{ field: "url", message: err.message }]);
    case "timeout":
      return new AppError("TIMEOUT", "the remote host was too slow");
    case "too_large":
      return new AppError("VALIDATION_ERROR", `url: the file is over ${maxBytes} bytes`, [
        { field: "url", message: `over ${maxBytes} bytes` },
      ]);
    case "invalid_url":
      return new AppError("VALIDATION_ERROR", `url: ${err.message}`, [
        { field: "url", message: err.message },
      ]);
    default:
      return new AppError("VALIDATION_ERROR", `url: could not fetch the image (${err.message})`, [
        { field: "url", message: err.message },
      ]);
  }
}

function baseNameOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    return "";
  }
}

/**
 * Imports an image from a public https URL into a site's library through the guarded fetch. Failed
 * attempts count toward the daily fetch-attempt limit; a success counts as an upload.
 */
export async function importFromUrl(
  ctx: MediaContext,
  siteId: string,
  input: { url: string; alt?: string | null },
  opts: ImportOptions = {},
) {
  if (typeof input.url !== "string" || input.url.trim() === "")
    throw new AppError("VALIDATION_ERROR", "url: required", [{ field: "url", message: "required" }]);
  const limits = ctx.config.limits;
  if ((await countRecentEvents(ctx, ctx.db, siteId, "upload")) >= limits.dailyUploads)
    throw uploadCapError(limits.dailyUploads);
  if ((await countRecentEvents(ctx, ctx.db, siteId, "fetch_failure")) >= limits.dailyFetchAttempts) {
    throw new AppError(
      "RATE_LIMITED",
      `this site reached its limit of ${limits.dailyFetchAttempts} failed fetches in the last 24 hours`,
    );
  }
  const failed = async (err: AppError) => {
    await ctx.db.insert(usageEvents).values({ siteId, kind: "fetch_failure", createdAt: ctx.clock.now() });
    return err;
  };
  const maxBytes = Math.min(limits.importMaxBytes, 10485760);
  let entry: LibraryEntry;
  try {
    const fetched = await guardedFetchStream(input.url.trim(), {
      maxBytes,
      timeoutMs: limits.importTimeoutMs,
      maxRedirects: limits.importMaxRedirects,
      allowHosts: ctx.config.fetchAllowHosts,
      tls: opts.tls,
      accept: "image/jpeg,image/png,image/webp,image/gif;q=0.9,*/*;q=0.1",
    });
    // The body streams into the store; an error mid-body (size, time) stores nothing.
    entry = await addLibraryStream(ctx, {
      siteId,
      body: fetched.body,
      size: fetched.length,
      source: "import",
      alt: input.alt ?? null,
      baseName: baseNameOf(input.url),
    });
  } catch (err) {
    if (err instanceof GuardedFetchError) throw await failed(fetchError(err, maxBytes));
    if (err instanceof StoreError) {
      const kind = err.reason === "too_large" ? "too_large" : "network";
      throw await failed(fetchError(new GuardedFetchError(kind, err.message), maxBytes));
    }
    if (err instanceof AppError && err.code === "VALIDATION_ERROR") throw await failed(err);
    throw err;
  }
  return { publicUrl: entry.url, path: entry.key, name: entry.name, url: entry.url, size: entry.size };
}
