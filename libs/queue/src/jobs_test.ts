import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { JOBS, type JobName } from "./jobs.ts";

const id = () => crypto.randomUUID();

describe("the job catalog's payload models", () => {
  for (const name of Object.keys(JOBS) as JobName[]) {
    const spec = JOBS[name];
    const fields = Object.keys(spec.payload.properties);
    const good = Object.fromEntries(fields.map((f) => [f, id()]));

    test(`${name}: a TypeBox model of ids only (${fields.join(", ") || "nothing"}) that parse applies`, () => {
      expect(spec.payload.additionalProperties).toBe(false);
      expect(Value.Check(spec.payload, good)).toBe(true);
      expect(spec.parse(good)).toEqual(good);
      // anything beyond the ids (a secret, a URL) is refused, and named
      expect(() => spec.parse({ ...good, cookie: "secret" })).toThrow(/cookie/);
      for (const bad of [null, [], "x", 1]) expect(() => spec.parse(bad)).toThrow(TypeError);
      for (const f of fields) {
        expect(() => spec.parse({ ...good, [f]: "not-a-uuid" })).toThrow(new RegExp(f));
        const { [f]: _gone, ...missing } = good;
        expect(() => spec.parse(missing)).toThrow(new RegExp(f));
      }
    });
  }
});
