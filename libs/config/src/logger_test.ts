import { describe, expect, test } from "bun:test";
import { createLogger } from "./logger.ts";

const capture = (level: "debug" | "info") => {
  const lines: any[] = [];
  return { lines, log: createLogger(level, { app: "t" }, { sink: (l) => lines.push(JSON.parse(l)) }) };
};

// The shape of a failed Drizzle query, with its PostgreSQL error as the cause.
function queryError(): Error {
  const pg = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
    name: "PostgresError",
    code: "22021",
    severity: "ERROR",
    detail: "Failing row contains (hash_of_a_key).",
  });
  const e = new Error("Failed query: select secret_column from t where x = $1\nparams: top-secret");
  return Object.assign(e, {
    query: "select secret_column from t where x = $1",
    params: ["top-secret"],
    cause: pg,
  });
}

describe("logs describe errors without SQL", () => {
  test("an Error field becomes name, message, code and frames; a failed query's statement and parameters stay out", () => {
    const { lines, log } = capture("info");
    log.error("boom", { cause: queryError() });
    const text = JSON.stringify(lines[0]);
    expect(text).not.toMatch(/secret_column|top-secret|hash_of_a_key|Failed query/);
    expect(lines[0].cause.message).toBe("database query failed");
    expect(lines[0].cause.cause).toMatchObject({ name: "PostgresError", code: "22021", severity: "ERROR" });
    expect(lines[0].cause.stack).toContain("at ");
    expect(lines[0].app).toBe("t");
  });

  test("at debug level the statement appears, never its parameters", () => {
    const { lines, log } = capture("debug");
    log.debug("boom", { cause: queryError() });
    expect(lines[0].cause.query).toContain("secret_column");
    expect(JSON.stringify(lines[0])).not.toContain("top-secret");
  });

  test("warnings carry the message without frames; an unserializable field does not throw", () => {
    const { lines, log } = capture("info");
    log.warn("retry", { cause: new Error("connect ECONNREFUSED 127.0.0.1:6379") });
    expect(lines[0].cause).toEqual({ name: "Error", message: "connect ECONNREFUSED 127.0.0.1:6379" });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    log.info("odd", { cyclic, n: 1n });
    expect(lines[1]).toMatchObject({ msg: "odd", unserializable: ["cyclic", "n"] });
  });
});
