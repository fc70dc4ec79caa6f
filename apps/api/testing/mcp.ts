import { afterAll, beforeAll } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { buildTestApp, type TestApp } from "./mod.ts";

/**
 * A server on 127.0.0.1 in front of a test app, for clients that need an address (the MCP SDK's).
 * Its address is known before the app is given (a test that puts it in PUBLIC_BASE_URL builds the app
 * after); until then it answers 503. Stop it in afterAll.
 */
export type AppServer = { base: string; serve(h: TestApp): void; stop(): void };

export function listenApp(h?: TestApp): AppServer {
  let handle: (req: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => handle(req) });
  const s: AppServer = {
    base: `http://127.0.0.1:${server.port}`,
    serve: (app) => {
      handle = (req) => app.app.handle(req);
    },
    stop: () => server.stop(true),
  };
  if (h) s.serve(h);
  return s;
}

/** The app and its loopback server of an MCP test file (set by mcpTestBed's beforeAll). */
export type McpTestBed = { h: TestApp; mcp: AppServer };

/**
 * For the calling test file: builds the test app (with `opts`) and a server in front of it in beforeAll,
 * and stops both in afterAll. Read `bed.h` and `bed.mcp` inside tests (they are set once beforeAll ran).
 */
export function mcpTestBed(opts?: Parameters<typeof buildTestApp>[0]): McpTestBed {
  const bed = {} as McpTestBed;
  beforeAll(async () => {
    bed.h = await buildTestApp(opts);
    bed.mcp = listenApp(bed.h);
  });
  afterAll(async () => {
    bed.mcp.stop();
    await bed.h.close();
  });
  return bed;
}

/**
 * The MCP SDK's own client, connected over Streamable HTTP to `<base>/mcp` with `key` as its bearer.
 * It has listed the tools, as a client does before calling them: the SDK then checks every tool
 * answer's structuredContent against that tool's output schema (a mismatch throws).
 */
export async function mcpClient(server: { base: string }, key: string, name = "mcp-test"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  await client.listTools();
  return client;
}

/**
 * A tool's answer as the tests read it: `structuredContent`, the text content, and for an error result
 * the error its text carries (`CODE: message`, a blank line, then `{"error": …}` as JSON).
 */
export type CallResult = {
  isError?: boolean;
  structuredContent?: any;
  content: { type: string; text: string }[];
  error?: any;
};

/** Calls a tool with the SDK client and answers its result, an error result included. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallResult> {
  const result = (await client.callTool({ name, arguments: args })) as unknown as CallResult;
  if (!result.isError) return result;
  const text = result.content[0]?.text ?? "";
  const json = text.indexOf("\n\n");
  return { ...result, error: json < 0 ? undefined : JSON.parse(text.slice(json + 2)).error };
}
