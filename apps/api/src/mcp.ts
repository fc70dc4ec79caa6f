import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Elysia } from "elysia";
import { AppError, authenticate, type Principal, requireScope } from "@site/domain";
import type { AppDeps } from "./deps.ts";
import { checkToolArgs, TOOLS } from "./mcp_tools.ts";

type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A domain failure as a tool error carrying the spec's code; the session goes on. */
function toolError(err: unknown, deps: AppDeps): ToolResult {
  const e = err instanceof AppError ? err : null;
  if (!e) deps.log.error("mcp tool failed", { cause: err instanceof Error ? err.stack : String(err) });
  const error = e
    ? { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) }
    : { code: "INTERNAL_ERROR", message: "internal error" };
  return {
    content: [{ type: "text", text: `${error.code}: ${error.message}` }],
    structuredContent: { error },
    isError: true,
  };
}

/** One MCP server whose tools act for `principal`. */
export function createMcpServer(deps: AppDeps, principal: Principal): Server {
  const server = new Server(
    { name: "site-content-api", version: "1.0.0" },
    {
      capabilities: { tools: {} },
      instructions:
        "Build and fill websites. List a site's media library first (list_media) and reuse files; import only when a new image is needed. Pages must reference a file's publicUrl/url, never an invented URL or a displayUrl.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.input)),
      annotations: { readOnlyHint: t.readOnly, openWorldHint: t.name === "import_media_from_url" },
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

/** POST/GET/DELETE /mcp: the Model Context Protocol over Streamable HTTP (stateless), same bearer keys and scopes. */
export function mcpRoutes(deps: AppDeps) {
  const handle = async ({ request }: { request: Request }) => {
    // 401 at the HTTP level, before the protocol starts.
    const principal = await authenticate(deps, request.headers.get("authorization"));
    const server = createMcpServer(deps, principal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(request);
      const body = await response.arrayBuffer();
      return new Response(body, { status: response.status, headers: response.headers });
    } finally {
      await server.close().catch(() => {});
    }
  };
  const detail = (summary: string) => ({
    summary,
    description:
      "Model Context Protocol over Streamable HTTP, stateless (no session id). Tools: list_templates, create_site, import_media_from_url, list_media, list_screenshot_styles. Same bearer API keys and scopes as the REST API; a missing scope is a tool error naming it.",
    tags: ["mcp"],
    security: [{ bearerAuth: [] as string[] }],
    responses: {
      200: { description: "JSON-RPC answer" },
      401: { description: "Error: missing, invalid or revoked API key (contract error body)" },
      405: { description: "Not offered in stateless mode" },
    },
  });
  return new Elysia()
    .post("/mcp", handle, { parse: "none", detail: detail("MCP: JSON-RPC requests") })
    .get("/mcp", handle, { detail: detail("MCP: server-sent events stream (405: stateless mode)") })
    .delete("/mcp", handle, { detail: detail("MCP: end a session (405: stateless mode)") });
}
