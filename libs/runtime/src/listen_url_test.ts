import { describe, expect, test } from "bun:test";
import { createLogger, loadConfig } from "@site/config";
import { listenUrlOf } from "./runtime.ts";

// Decision 1501: where LISTEN connects, and the start line that says a process polls instead.
const base = { SECRET_KEY: "0123456789abcdef0123" };
const POOLED = "postgres://app@127.0.0.1:6432/site";
const DIRECT = "postgres://app@127.0.0.1:5432/site";

function withLog(env: Record<string, string>, databaseUrl: string) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("info", {}, { sink: (l) => lines.push(JSON.parse(l)) });
  return { url: listenUrlOf(loadConfig({ ...base, ...env }), databaseUrl, log), lines };
}

describe("the LISTEN URL", () => {
  test("a direct DATABASE_URL listens on itself, quietly", () => {
    const r = withLog({ DATABASE_URL: DIRECT }, DIRECT);
    expect(r.url).toBe(DIRECT);
    expect(r.lines).toEqual([]);
  });

  test("DATABASE_LISTEN_URL wins, through a pooler too", () => {
    const r = withLog(
      { DATABASE_URL: POOLED, DATABASE_POOLER: "transaction", DATABASE_LISTEN_URL: DIRECT },
      POOLED,
    );
    expect(r.url).toBe(DIRECT);
    expect(r.lines).toEqual([]);
  });

  test("through a transaction-mode pooler without one: no LISTEN, and the start log says it polls and how often", () => {
    const r = withLog(
      { DATABASE_URL: POOLED, DATABASE_POOLER: "transaction", DATABASE_LISTEN_POLL_MS: "750" },
      POOLED,
    );
    expect(r.url).toBeNull();
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatchObject({ level: "warn", pollMs: 750 });
    expect(String(r.lines[0]!.msg)).toContain("every 750 ms");
  });
});
