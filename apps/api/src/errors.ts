import type { Logger } from "@site/config";
import { AppError, asUnavailable, errorBody } from "@site/domain/core";

type ElysiaIssue = {
  path?: string;
  message?: string;
  summary?: string;
  schema?: { description?: string; error?: unknown };
};

function fieldOf(path: string | undefined): string {
  return (path ?? "").replace(/^\//, "").replace(/\//g, ".") || "body";
}

function validationDetails(error: unknown): { field: string; message: string }[] {
  const all = (error as { all?: ElysiaIssue[] }).all;
  if (Array.isArray(all) && all.length > 0) {
    const seen = new Set<string>();
    const out: { field: string; message: string }[] = [];
    for (const issue of all) {
      const field = fieldOf(issue.path);
      if (seen.has(field)) continue;
      seen.add(field);
      // A model may say what it expects in words (`error`); TypeBox's own message otherwise.
      const said = typeof issue.schema?.error === "string" ? issue.schema.error : undefined;
      out.push({ field, message: said ?? issue.summary ?? issue.message ?? "invalid" });
    }
    return out;
  }
  return [{ field: "body", message: "invalid" }];
}

/**
 * The RFC 6750 challenge of a 401: clients that see it know to send a bearer key (not to start OAuth),
 * and `invalid_token` tells them the key they sent was refused. For /mcp it also names the protected
 * resource's metadata (RFC 9728 `resource_metadata`), which MCP clients read before anything else.
 */
export function bearerChallenge(authorization: string | null | undefined, resourceMetadata?: string): string {
  const challenge = authorization
    ? 'Bearer realm="site-content-api", error="invalid_token", error_description="invalid or revoked API key"'
    : 'Bearer realm="site-content-api"';
  return resourceMetadata ? `${challenge}, resource_metadata="${resourceMetadata}"` : challenge;
}

/**
 * Renders any failure as the contract's error body; only unexpected ones are logged, with their cause.
 * A dependency that is down or too slow (database, Redis, object storage) answers 503
 * SERVICE_UNAVAILABLE with Retry-After; 500 is left for our own bugs (decision 0800).
 */
export function renderError(
  code: string | number,
  error: unknown,
  log: Logger,
  requestId: string,
  opts: { retryAfterSeconds?: number; authorization?: string | null } = {},
): Response {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId, ...headers },
    });
  if (error instanceof AppError)
    return json(error.status, errorBody(error.code, error.message, error.details), {
      // Every 429 says when to come back; a limit that knows its reset sets its own Retry-After.
      ...(error.status === 429 ? { "retry-after": String(opts.retryAfterSeconds ?? 5) } : {}),
      ...error.headers,
      // A 401 that says more than the usual challenge (/mcp names its metadata) keeps its own.
      ...(error.status === 401
        ? { "www-authenticate": error.headers["www-authenticate"] ?? bearerChallenge(opts.authorization) }
        : {}),
    });
  const unavailable = asUnavailable(error, opts.retryAfterSeconds ?? 5);
  if (unavailable) {
    log.warn("dependency unavailable", {
      requestId,
      details: unavailable.details,
      cause: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
    return json(
      unavailable.status,
      errorBody(unavailable.code, unavailable.message, unavailable.details),
      unavailable.headers,
    );
  }
  if (code === "VALIDATION") {
    const details = validationDetails(error);
    const message = details.map((d) => `${d.field}: ${d.message}`).join("; ");
    return json(400, errorBody("VALIDATION_ERROR", message, details));
  }
  if (code === "PARSE")
    return json(
      400,
      errorBody("VALIDATION_ERROR", "body: not valid JSON", [{ field: "body", message: "not valid JSON" }]),
    );
  if (code === "NOT_FOUND") return json(404, errorBody("NOT_FOUND", "no such route"));
  if (code === "INVALID_COOKIE_SIGNATURE") return json(400, errorBody("VALIDATION_ERROR", "invalid cookie"));
  log.error("unexpected error", {
    requestId,
    code: String(code),
    // The logger describes an Error without SQL; anything else is reduced to text.
    cause: error instanceof Error ? error : String(error),
  });
  return json(
    500,
    errorBody("INTERNAL_ERROR", "internal error; quote the x-request-id header when reporting it"),
  );
}
