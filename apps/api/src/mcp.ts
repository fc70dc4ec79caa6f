import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { readRequestBody } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  AppError,
  errorBody,
  type Principal,
  rateLimitError,
  rateLimitHeaders,
  requireScope,
  SCOPES,
  validationError,
} from "@site/domain/core";
import { Elysia } from "elysia";
import { type AuthMacros, principalCache } from "./auth.ts";
import type { AppDeps } from "./deps.ts";
import { bearerChallenge } from "./errors.ts";
import { assertBoundedInput } from "./input_bounds.ts";
import {
  inToolWords,
  keyedToolCall,
  splitKey,
  type ToolResult,
  toolResultOf,
  withKeyArgument,
} from "./mcp_idempotency.ts";
import type { ToolWork } from "./mcp_tools/tool.ts";
import { checkToolArgs, TOOLS, toolsFor } from "./mcp_tools.ts";
import { modelJson } from "./openapi_document.ts";

/**
 * A domain failure as a tool error carrying the spec's code; the session goes on. The text says
 * `CODE: message`, then the error as JSON (`{"error": {code, message, details?}}`, REST's error body).
 * No structuredContent: a client checks it against the tool's output schema even on an error (the
 * TypeScript SDK's client does; decision 0051), and an error is not the tool's model.
 */
function toolError(thrown: unknown, deps: AppDeps): ToolResult {
  const err = inToolWords(thrown);
  const e = err instanceof AppError ? err : null;
  if (!e) deps.log.error("mcp tool failed", { cause: err instanceof Error ? err : String(err) });
  const error = e
    ? { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) }
    : { code: "INTERNAL_ERROR", message: "internal error" };
  return {
    content: [
      { type: "text", text: `${error.code}: ${error.message}\n\n${JSON.stringify({ error }, null, 2)}` },
    ],
    isError: true,
  };
}

/**
 * The largest JSON-RPC body: room for upload_media's 5 MB file in base64 (6.7 MB) and its envelope;
 * the SDK's default of 4 MiB would cap uploads at about 3 MB. The listener takes up to 12 MiB.
 */
export const MCP_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Reads a JSON-RPC body (at most MCP_MAX_BODY_BYTES) and applies the edge's input bounds to it, since this
 * route parses its own body: too deep, NUL or lone surrogates answer 400 before the protocol runs.
 */
async function readBoundedJson(request: Request): Promise<unknown> {
  const read = await readRequestBody(request, MCP_MAX_BODY_BYTES);
  if (read.tooLarge) throw validationError("body", `over ${MCP_MAX_BODY_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.text);
  } catch {
    throw validationError("body", "not valid JSON");
  }
  assertBoundedInput(parsed, "body");
  return parsed;
}

/** How many calls a JSON-RPC body makes: each message of a batch that names a method, else one. */
function callsIn(body: unknown): number {
  if (!Array.isArray(body)) return 1;
  return body.filter((m) => typeof m === "object" && m !== null && "method" in m).length;
}

/** One MCP server whose tools act for `principal`. */
export function createMcpServer(deps: AppDeps, principal: Principal): Server {
  const server = new Server(
    { name: "site-content-api", version: "1.0.0" },
    {
      capabilities: { tools: {} },
      instructions:
        "Build and fill websites. Find the site first (list_sites). List its media library (list_media) and reuse files; import (import_media_from_url) or film (queue_screenshot, then get_screenshot) only when a new image is needed. Put images on pages with create_page/update_page (their `media` argument writes the image blocks); pages must reference a file's url, never an invented URL or a displayUrl. publish_site makes the pages public. Set the header, footer and styles with get_site_layout/update_site_layout (pass the etag back), translate the shell with set_chrome_strings, keep structured content in collections (define_collection, upsert_collection_items), order pages with reorder_pages, and link pages by path or page:<id> (translate_links checks them). Work that ends later (get_screenshot, get_clip, get_campaign, get_social_post, retry_webhook_delivery) takes waitSeconds (up to 25): wait on the server instead of polling. Social posts go to accounts from list_social_accounts (add one with connect_social_account or start_social_connection); webhooks are managed with create_webhook and list_webhook_deliveries.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    // Only what this key may call: a client shows an agent no tool that would fail for want of a scope.
    tools: toolsFor(principal.scopes).map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: withKeyArgument(t.name, JSON.parse(JSON.stringify(t.input))),
      outputSchema: modelJson(t.output),
      annotations: { readOnlyHint: t.readOnly, openWorldHint: t.openWorld ?? false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<ToolResult> => {
    const t = TOOLS.find((x) => x.name === request.params.name);
    if (!t) return toolError(new AppError("NOT_FOUND", `no tool named ${request.params.name}`), deps);
    // `idempotencyKey` of a tool that charges, sends or creates (decision 1415), apart from its arguments.
    const { key, args: given } = splitKey(t.name, request.params.arguments);
    let args: unknown;
    try {
      // Refused before the work (scope, arguments): nothing is kept, as REST keeps no 400 or 403.
      if (t.scope) requireScope(principal, t.scope);
      args = checkToolArgs(t, given);
    } catch (err) {
      return toolError(err, deps);
    }
    const run = async (work?: ToolWork): Promise<{ result: ToolResult; status: number }> => {
      try {
        return { result: toolResultOf(await t.run(deps, principal, args as never, work)), status: 200 };
      } catch (err) {
        return { result: toolError(err, deps), status: err instanceof AppError ? err.status : 500 };
      }
    };
    if (key === undefined) return (await run()).result;
    try {
      return await keyedToolCall(deps, principal, { name: t.name, key, args: given }, run);
    } catch (err) {
      return toolError(err, deps);
    }
  });
  return server;
}

/** Where /mcp's OAuth protected-resource metadata is (RFC 9728: the well-known path, then the resource's path). */
export function mcpResourceMetadataUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl}/.well-known/oauth-protected-resource/mcp`;
}

/**
 * RFC 9728 protected-resource metadata of /mcp: the resource and how to present a token (a bearer API
 * key in the Authorization header). It names no authorization server: keys are issued by the operator
 * (`bun run admin key:create`), so a client that reads it knows there is no OAuth flow to start and
 * reports a refused key as such.
 */
function protectedResourceMetadata(publicBaseUrl: string) {
  return {
    resource: `${publicBaseUrl}/mcp`,
    resource_name: "Site Content API (MCP)",
    bearer_methods_supported: ["header"],
    scopes_supported: [...SCOPES],
    resource_documentation: `${publicBaseUrl}/swagger`,
  };
}

/** The origins a browser page may call /mcp from: the server's own (PUBLIC_BASE_URL) and MCP_ALLOWED_ORIGINS. */
function allowedOrigins(deps: AppDeps): Set<string> {
  return new Set([new URL(deps.config.publicBaseUrl).origin, ...deps.config.mcpAllowedOrigins]);
}

/**
 * POST/GET/DELETE /mcp: the Model Context Protocol over Streamable HTTP (stateless), same bearer keys and
 * scopes. Each POST gets its own server and transport, closed before the answer leaves; GET (the
 * server-to-client event stream) and DELETE (end a session) have no meaning without sessions: 405.
 */
export function mcpRoutes(deps: AppDeps, auth: AuthMacros) {
  const origins = allowedOrigins(deps);
  // DNS rebinding: a page of another origin that reaches this host by name carries its own Origin.
  const checkOrigin = ({ request }: { request: Request }) => {
    const origin = request.headers.get("origin");
    if (origin !== null && !origins.has(origin))
      throw new AppError(
        "FORBIDDEN",
        `requests from origin ${origin} may not use /mcp (the server's own origin and MCP_ALLOWED_ORIGINS may)`,
      );
  };
  const notAllowed = ({ set }: { set: { status?: number | string; headers: Record<string, unknown> } }) => {
    set.status = 405;
    set.headers.allow = "POST";
    return errorBody(
      "METHOD_NOT_ALLOWED",
      "this MCP server is stateless: send each JSON-RPC message with POST; there is no event stream or session to end",
    );
  };
  // 401 at the HTTP level, before the protocol starts; scopes are checked per tool. Authenticated here
  // rather than by the `anyKey` macro so that the 401 names the protected-resource metadata
  // (RFC 9728) that MCP clients read first.
  const principals = principalCache(deps);
  const metadataUrl = mcpResourceMetadataUrl(deps.config.publicBaseUrl);
  const authenticateMcp = async ({
    request,
    set,
  }: {
    request: Request;
    set: { headers: Record<string, string | number> };
  }) => {
    try {
      const principal = await principals.of(request);
      if (principal.rate) Object.assign(set.headers, rateLimitHeaders(principal.rate));
    } catch (err) {
      if (err instanceof AppError && err.status === 401)
        throw new AppError(err.code, err.message, err.details, {
          ...err.headers,
          "www-authenticate": bearerChallenge(request.headers.get("authorization"), metadataUrl),
        });
      throw err;
    }
  };
  const handle = async ({
    request,
    set,
  }: {
    request: Request;
    set: { headers: Record<string, string | number> };
  }) => {
    const principal = await principals.of(request);
    const parsedBody = await readBoundedJson(request);
    // The request itself counted one call; each further call of a batch counts too (decision 1414),
    // all of them or none: a batch past the allowance is refused whole, before any call runs.
    const extra = callsIn(parsedBody) - 1;
    if (extra > 0 && deps.limiter) {
      const rate = await deps.limiter.take(principal.keyId, extra);
      if (!rate.allowed) throw rateLimitError(rate);
      Object.assign(set.headers, rateLimitHeaders(rate));
    }
    const server = createMcpServer(deps, principal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(request, { parsedBody });
      const body = await response.arrayBuffer();
      return new Response(body, { status: response.status, headers: response.headers });
    } finally {
      // Closes the transport too: nothing of this request outlives it.
      await server.close().catch(() => {});
    }
  };
  const detail = (summary: string) => ({
    summary,
    description: `Model Context Protocol over Streamable HTTP, stateless (no session id). Tools: ${TOOLS.map((t) => t.name).join(", ")}. Same bearer API keys and scopes as the REST API; a missing scope is a tool error naming it.`,
    tags: ["mcp"],
    responses: {
      200: { description: "JSON-RPC answer" },
      400: { description: "Error: body not JSON, over 8 MiB, nested too deep, or text PostgreSQL refuses" },
      401: { description: "Error: missing, invalid or revoked API key (contract error body)" },
      403: {
        description: "Error: a browser Origin that is neither the server's own nor in MCP_ALLOWED_ORIGINS",
      },
      405: { description: "Error: GET and DELETE are not offered in stateless mode (Allow: POST)" },
    },
  });
  const metadata = () => protectedResourceMetadata(deps.config.publicBaseUrl);
  const metadataDetail = {
    summary: "OAuth protected-resource metadata of /mcp (RFC 9728)",
    description:
      "Public. Names the resource (`<PUBLIC_BASE_URL>/mcp`) and how to present a key (a bearer API key in the Authorization header); no authorization server: keys come from the operator. A 401 from /mcp points here with `WWW-Authenticate: Bearer resource_metadata=…`.",
    tags: ["mcp"],
  };
  return (
    new Elysia()
      .get("/.well-known/oauth-protected-resource/mcp", metadata, { detail: metadataDetail })
      .get("/.well-known/oauth-protected-resource", metadata, { detail: metadataDetail })
      // Before authentication: a foreign page learns nothing about keys.
      .onTransform(checkOrigin)
      .use(auth)
      .post("/mcp", handle, {
        transform: authenticateMcp,
        parse: "none",
        operation: "sendMcpMessage",
        ownBearer: true,
        detail: detail("MCP: JSON-RPC requests"),
      })
      .get("/mcp", notAllowed, {
        transform: authenticateMcp,
        operation: "openMcpStream",
        ownBearer: true,
        detail: detail("MCP: server-sent events stream (405: stateless mode)"),
      })
      .delete("/mcp", notAllowed, {
        transform: authenticateMcp,
        operation: "endMcpSession",
        ownBearer: true,
        detail: detail("MCP: end a session (405: stateless mode)"),
      })
  );
}
