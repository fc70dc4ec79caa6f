import type { Logger } from "@site/config";
import { AppError, errorBody } from "@site/domain";

type ElysiaIssue = { path?: string; message?: string; summary?: string; schema?: { description?: string } };

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
      out.push({ field, message: issue.summary ?? issue.message ?? "invalid" });
    }
    return out;
  }
  return [{ field: "body", message: "invalid" }];
}

/** Renders any failure as the contract's error body; only unexpected ones are logged, with their cause. */
export function renderError(code: string | number, error: unknown, log: Logger, requestId: string): Response {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId },
    });
  if (error instanceof AppError)
    return json(error.status, errorBody(error.code, error.message, error.details));
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
    cause: error instanceof Error ? error.stack : String(error),
  });
  return json(
    500,
    errorBody("INTERNAL_ERROR", "internal error; quote the x-request-id header when reporting it"),
  );
}
