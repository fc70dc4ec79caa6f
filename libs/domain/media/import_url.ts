import { AppError, type InWork, type OwnedSite } from "@site/domain/core";
import { checkFetchTarget, GuardedFetchError, guardedFetchStream, TargetError } from "@site/net";
import { isStoreDown, StoreError } from "@site/storage";
import { addedMediaFile } from "./embed.ts";
import { addLibraryStream, type LibraryEntry, type MediaContext } from "./library.ts";
import type { AddedMediaFile, ImportUrlBody } from "./models.ts";
import { reserveImport, settleImportReservation } from "./quota.ts";

/**
 * `tls`, a test hook: extra CA certificates the guarded fetch trusts in-process (production leaves it
 * unset). `inWork`: called with the answer inside the landing transaction (decision 1411).
 */
export type ImportOptions = { tls?: { ca?: string | string[] }; inWork?: InWork<AddedMediaFile> };

/**
 * A failed fetch as the API's error: its message is the guarded fetch's own words (which never quote a
 * library's error text) and `details[0].reason` names the cause (dns, refused, tls, …) for programs.
 */
function fetchError(err: GuardedFetchError, maxBytes: number): AppError {
  const details = (message: string) => [{ field: "url", message, reason: err.kind }];
  switch (err.kind) {
    case "blocked":
      return new AppError("BLOCKED_HOST", `url: ${err.message}`, details(err.message));
    case "timeout":
      return new AppError("TIMEOUT", `url: ${err.message}`, details(err.message));
    case "too_large":
      return new AppError(
        "VALIDATION_ERROR",
        `url: the file is over ${maxBytes} bytes`,
        details(`over ${maxBytes} bytes`),
      );
    case "invalid_url":
    case "http_status":
    case "too_many_redirects":
      return new AppError("VALIDATION_ERROR", `url: ${err.message}`, details(err.message));
    default:
      return new AppError(
        "VALIDATION_ERROR",
        `url: could not fetch the image: ${err.message}`,
        details(err.message),
      );
  }
}

/** The guard's refusal of a URL as written (before DNS or any connection), or null when it may be fetched. */
function refusedAsWritten(ctx: MediaContext, url: string): GuardedFetchError | null {
  try {
    checkFetchTarget(url, ctx.config.fetchAllowHosts ?? [], {
      localNetwork: ctx.config.allowLocalNetworkForDevelopment,
    });
    return null;
  } catch (err) {
    if (!(err instanceof TargetError)) throw err;
    return new GuardedFetchError(err.kind === "blocked" ? "blocked" : "invalid_url", err.message, {
      refusedBeforeConnecting: true,
    });
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
  site: OwnedSite,
  input: ImportUrlBody,
  opts: ImportOptions = {},
): Promise<AddedMediaFile> {
  const siteId = site.id;
  if (typeof input.url !== "string" || input.url.trim() === "")
    throw new AppError("VALIDATION_ERROR", "url: required", [{ field: "url", message: "required" }]);
  const limits = ctx.config.limits;
  const maxBytes = Math.min(limits.importMaxBytes, 10485760);
  // A URL the guard refuses as written (not https, a guarded address, malformed) is answered before
  // anything is reserved: no host is contacted, so it is no failed fetch, even with the limit spent.
  const refused = refusedAsWritten(ctx, input.url.trim());
  if (refused) throw fetchError(refused, maxBytes);
  // The attempt and the upload slot are reserved before the host is reached (decision 0806): imports in
  // flight count, so N concurrent imports cannot all pass a check made before any of them ended.
  const reservation = await reserveImport(ctx, siteId, limits.importTimeoutMs + 60_000);
  let entry: LibraryEntry;
  try {
    const fetched = await guardedFetchStream(input.url.trim(), {
      maxBytes,
      timeoutMs: limits.importTimeoutMs,
      maxRedirects: limits.importMaxRedirects,
      allowHosts: ctx.config.fetchAllowHosts,
      localNetwork: ctx.config.allowLocalNetworkForDevelopment,
      tls: opts.tls,
      accept: "image/jpeg,image/png,image/webp,image/gif;q=0.9,*/*;q=0.1",
    });
    // The body streams into the store; an error mid-body (size, time) stores nothing. Landing confirms
    // the upload slot and releases the attempt in the same transaction as the library row.
    entry = await addLibraryStream(ctx, {
      siteId,
      body: fetched.body,
      size: fetched.length,
      source: "import",
      alt: input.alt ?? null,
      baseName: baseNameOf(input.url),
      reservation,
      inWork: opts.inWork && ((tx, landed) => opts.inWork!(tx, addedMediaFile(landed, input.alt))),
    });
  } catch (err) {
    // A failed fetch stays counted; anything else (a full store, the quota, our bug) is not the host's,
    // and neither is a refusal of the guard made before any connection (a name resolving to a private address).
    const failedFetch =
      (err instanceof GuardedFetchError && !err.refusedBeforeConnecting) ||
      (err instanceof StoreError && !isStoreDown(err)) ||
      (err instanceof AppError && err.code === "VALIDATION_ERROR");
    await settleImportReservation(ctx, reservation, failedFetch ? "failed_fetch" : "not_counted").catch(
      (e: unknown) => ctx.log.warn("could not settle an import reservation", { cause: String(e) }),
    );
    if (err instanceof GuardedFetchError) throw fetchError(err, maxBytes);
    if (err instanceof StoreError && !isStoreDown(err)) {
      const kind = err.reason === "too_large" ? "too_large" : "network";
      throw fetchError(new GuardedFetchError(kind, err.message), maxBytes);
    }
    throw err;
  }
  return addedMediaFile(entry, input.alt);
}
