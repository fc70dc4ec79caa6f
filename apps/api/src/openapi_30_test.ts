import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// The document as OpenAPI 3.0 (issue 37, decision 1532): `/swagger/json?version=3.0` serves the same
// operations and models for the client generators that read only 3.0, and a 3.0 validator
// (@apidevtools/swagger-parser, which checks a 3.0 document against the 3.0 schema, where `examples`,
// `const` and type arrays are unknown keywords) accepts it. The 3.1 document stays the default.

type Json = any;
let h: TestApp;
let doc31: Json;
let doc30: Json;

beforeAll(async () => {
  h = await buildTestApp();
  doc31 = await (await h.call("GET", "/swagger/json")).json();
  const res = await h.call("GET", "/swagger/json?version=3.0");
  expect(res.status).toBe(200);
  doc30 = await res.json();
});
afterAll(() => h.close());

/** Every object below `value` with the JSON pointer-ish path it sits at. */
function* objects(value: unknown, at = ""): Generator<[string, Json]> {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* objects(v, `${at}/${i}`);
  else if (value && typeof value === "object") {
    yield [at, value];
    for (const [k, v] of Object.entries(value))
      if (k !== "examples" && k !== "example") yield* objects(v, `${at}/${k}`);
  }
}

/** The operations of a document: `METHOD path` → operationId. */
const operationIds = (doc: Json) =>
  Object.fromEntries(
    Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => [`${method} ${path}`, (op as Json).operationId]),
    ),
  );

describe("OpenAPI 3.0 at /swagger/json?version=3.0", () => {
  test("a 3.0 validator accepts it; the default document is still 3.1", async () => {
    expect(doc31.openapi).toMatch(/^3\.1\./);
    expect(doc30.openapi).toBe("3.0.3");
    await SwaggerParser.validate(structuredClone(doc30));
    // The validator is live: the 3.1 document merely relabelled 3.0 (type arrays, `examples`) is refused.
    const relabelled = { ...structuredClone(doc31), openapi: "3.0.3" };
    await expect(SwaggerParser.validate(relabelled)).rejects.toThrow();
    expect((await h.call("GET", "/swagger/json?version=3.1")).status).toBe(200);
    expect((await h.call("GET", "/swagger/json?version=2.0")).status).toBe(400);
  });

  test("the same operations, ids and named models as the 3.1 document", () => {
    expect(operationIds(doc30)).toEqual(operationIds(doc31));
    expect(Object.keys(doc30.components.schemas).sort()).toEqual(
      Object.keys(doc31.components.schemas).sort(),
    );
  });

  test("null is said with `nullable`, one value with `enum`, an example with `example`", () => {
    const found: string[] = [];
    for (const [at, o] of objects(doc30)) {
      if (Array.isArray(o.type)) found.push(`${at}: type array`);
      if (o.type === "null") found.push(`${at}: type null`);
      if ("const" in o && !at.includes("/properties/const")) found.push(`${at}: const`);
      if (typeof o.exclusiveMinimum === "number") found.push(`${at}: numeric exclusiveMinimum`);
    }
    expect(found).toEqual([]);
    // Each property 3.1 types as `[x, "null"]` is `type: x, nullable: true` in 3.0.
    let seen = 0;
    for (const [name, model] of Object.entries(doc31.components.schemas as Json))
      for (const [k, p] of Object.entries(((model as Json).properties ?? {}) as Record<string, Json>)) {
        if (!Array.isArray(p.type) || !p.type.includes("null")) continue;
        seen++;
        const p30 = doc30.components.schemas[name].properties[k];
        expect({ name, k, nullable: p30.nullable, type: p30.type }).toEqual({
          name,
          k,
          nullable: true,
          type: p.type.find((t: string) => t !== "null"),
        });
      }
    expect(seen).toBeGreaterThan(5);
  });
});
