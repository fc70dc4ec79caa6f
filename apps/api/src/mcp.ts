import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Elysia } from "elysia";
import { AppError, errorBody, type Principal, requireScope, validationError } from "@site/domain/core";
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
} from "@modelcontextprotocol/sdk/server/requestBody.js";
import type { AuthMacros } from "./auth.ts";
import type { AppDeps } from "./deps.ts";
import { assertBoundedInput } from "./input_bounds.ts";
import { checkToolArgs, TOOLS } from "./mcp_tools.ts";

type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A domain failure as a tool error carrying the spec's code; the session goes on. */
function toolError(err: unknown, deps: AppDeps): ToolResult {
  const e = err instanceof AppError ? err : null;
  if (!e) deps.log.error("mcp tool failed", { cause: err instanceof Error ? err : String(err) });
  const error = e
    ? { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) }
    : { code: "INTERNAL_ERROR", message: "internal error" };
  return {
    content: [{ type: "text", text: `${error.code}: ${error.message}` }],
    structuredContent: { error },
    isError: true,
  };
}

/**
 * Reads a JSON-RPC body (at most the SDK's 4 MiB) and applies the edge's input bounds to it, since this
 * route parses its own body: too deep, NUL or lone surrogates answer 400 before the protocol runs.
 */
async function readBoundedJson(request: Request): Promise<unknown> {
  const read = await readRequestBody(request, DEFAULT_MAX_REQUEST_BODY_SIZE);
  if (read.tooLarge) throw validationError("body", `over ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.text);
  } catch {
    throw validationError("body", "not valid JSON");
  }
  assertBoundedInput(parsed, "body");
  return parsed;
}

/** One MCP server whose tools act for `principal`. */
export function createMcpServer(deps: AppDeps, principal: Principal): Server {
  const server = new Server(
    { name: "site-content-api", version: "1.0.0" },
    {
      capabilities: { tools: {} },
      instructions:
        "Build and fill websites. Find the site first (list_sites). List its media library (list_media) and reuse files; import (import_media_from_url) or film (queue_screenshot, then get_screenshot) only when a new image is needed. Put images on pages with create_page/update_page (their `media` argument writes the image blocks); pages must reference a file's url, never an invented URL or a displayUrl. publish_site makes the pages public. Set the header, footer and styles with get_site_layout/update_site_layout (pass the etag back), translate the shell with set_chrome_strings, keep structured content in collections (define_collection, upsert_collection_items), order pages with reorder_pages, and link pages by path or page:<id> (translate_links checks them).",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.input)),
      annotations: { readOnlyHint: t.readOnly, openWorldHint: t.openWorld ?? false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<ToolResult> => {
    const t = TOOLS.find((x) => x.name === request.params.name);
    if (!t) return toolError(new AppError("NOT_FOUND", `no tool named ${request.params.name}`), deps);
    try {
      requireScope(principal, t.scope);
      const args = checkToolArgs(t, request.params.arguments);
      const { value, note } = await t.run(deps, principal, args as never);
      const text = note ? `${note}\n\n${JSON.stringify(value, null, 2)}` : JSON.stringify(value, null, 2);
      return { content: [{ type: "text", text }], structuredContent: value };
    } catch (err) {
      return toolError(err, deps);
    }
  });
  return server;
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
  // 401 at the HTTP level (the `authenticated` macro), before the protocol starts; scopes are checked per tool.
  const handle = async ({ request, principal }: { request: Request; principal: Principal }) => {
    const parsedBody = await readBoundedJson(request);
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
      400: { description: "Error: body not JSON, over 4 MiB, nested too deep, or text PostgreSQL refuses" },
      401: { description: "Error: missing, invalid or revoked API key (contract error body)" },
      403: {
        description: "Error: a browser Origin that is neither the server's own nor in MCP_ALLOWED_ORIGINS",
      },
      405: { description: "Error: GET and DELETE are not offered in stateless mode (Allow: POST)" },
    },
  });
  return (
    new Elysia()
      // Before authentication: a foreign page learns nothing about keys.
      .onTransform(checkOrigin)
      .use(auth)
      .post("/mcp", handle, {
        authenticated: true,
        parse: "none",
        detail: detail("MCP: JSON-RPC requests"),
      })
      .get("/mcp", notAllowed, {
        authenticated: true,
        detail: detail("MCP: server-sent events stream (405: stateless mode)"),
      })
      .delete("/mcp", notAllowed, {
        authenticated: true,
        detail: detail("MCP: end a session (405: stateless mode)"),
      })
  );
}
