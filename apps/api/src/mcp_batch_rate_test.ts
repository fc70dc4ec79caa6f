import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// A JSON-RPC batch counts each of its calls against the key's rate limit (CONTRACT "Bounded: retries,
// replays, images"; issue 38; decision 1414), not as one request.
type Json = any;
let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp({ env: { RATE_LIMIT_REQUESTS: "20", RATE_LIMIT_WINDOW_MS: "60000" } });
});
afterAll(() => h.close());

const batchOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    jsonrpc: "2.0",
    id: i + 1,
    method: "tools/call",
    params: { name: "list_sites", arguments: {} },
  }));
const mcp = (key: string, body: unknown) =>
  h.call("POST", "/mcp", { key, body, headers: { accept: "application/json, text/event-stream" } });

describe("MCP: a JSON-RPC batch against the rate limit", () => {
  test("a batch of 100 calls over an allowance of 20 answers 429 RATE_LIMITED with Retry-After; no call of it runs", async () => {
    const { key } = await h.seedOrg();
    const res = await mcp(key, batchOf(100));
    expect(res.status).toBe(429);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe("RATE_LIMITED");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    // The refused calls did not count: the key still has its allowance but for the batch's one request.
    const single = await mcp(key, batchOf(1)[0]);
    expect(single.status).toBe(200);
    expect(Number(single.headers.get("ratelimit-remaining"))).toBe(18);
  });

  test("a batch of 5 calls takes 5 of the allowance: 15 single calls more pass, the next is refused", async () => {
    const { key } = await h.seedOrg();
    const batch = await mcp(key, batchOf(5));
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as Json[];
    expect(answers).toHaveLength(5);
    expect(answers.every((a) => a.result && !a.result.isError)).toBe(true);
    expect(Number(batch.headers.get("ratelimit-remaining"))).toBe(15);
    for (let i = 0; i < 15; i++) expect((await mcp(key, batchOf(1)[0])).status).toBe(200);
    const over = await mcp(key, batchOf(1)[0]);
    expect(over.status).toBe(429);
  });

  test.skipIf(!process.env.TEST_REDIS_URL)(
    "through Redis (every API process together) the same: a batch of 5 takes 5, one of 100 is refused whole",
    async () => {
      const shared = await buildTestApp({
        env: {
          REDIS_URL: process.env.TEST_REDIS_URL!,
          RATE_LIMIT_REQUESTS: "20",
          RATE_LIMIT_WINDOW_MS: "60000",
          QUEUE_PREFIX: `mcp-batch-${Date.now().toString(36)}`,
        },
      });
      try {
        const { key } = await shared.seedOrg();
        const call = (body: unknown) =>
          shared.call("POST", "/mcp", {
            key,
            body,
            headers: { accept: "application/json, text/event-stream" },
          });
        const five = await call(batchOf(5));
        expect(five.status).toBe(200);
        expect(Number(five.headers.get("ratelimit-remaining"))).toBe(15);
        const hundred = await call(batchOf(100));
        expect(hundred.status).toBe(429);
        const one = await call(batchOf(1)[0]);
        expect(one.status).toBe(200);
        expect(Number(one.headers.get("ratelimit-remaining"))).toBe(13);
      } finally {
        await shared.close();
      }
    },
  );
});
