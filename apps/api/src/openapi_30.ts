/**
 * The OpenAPI 3.1 document written down as OpenAPI 3.0.3, for the client generators that read only 3.0
 * (served at `/swagger/json?version=3.0`; decision 1532). The 3.1 document stays the source and the
 * default: this is a mechanical translation of what 3.0's Schema Object cannot say.
 * - `type: [x, "null"]`, an `anyOf` branch `{type: "null"}`, a `null` in an `enum` → `nullable: true`;
 * - `const` → a one-value `enum`; a schema's `examples` list → its first as `example`;
 * - a numeric `exclusiveMinimum`/`exclusiveMaximum` → `minimum`/`maximum` with the boolean form;
 * - a `$ref` with siblings (a description) → `allOf: [{$ref}]` beside them, since 3.0 ignores siblings;
 * - `patternProperties` → `additionalProperties`; keywords 3.0 lacks (`$schema`, `$id`,
 *   `contentMediaType`, …) go, and so do `info.license.identifier` and `jsonSchemaDialect`.
 */

type Json = Record<string, any>;

export const OPENAPI_30_VERSION = "3.0.3";

/** JSON Schema keywords 3.0's Schema Object does not have (and that change nothing a generator reads). */
const DROPPED = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$comment",
  "$defs",
  "contentMediaType",
  "contentEncoding",
  "unevaluatedProperties",
  "unevaluatedItems",
  "dependentRequired",
  "dependentSchemas",
  "propertyNames",
  "prefixItems",
  "if",
  "then",
  "else",
]);

const isNullSchema = (s: unknown) => !!s && typeof s === "object" && (s as Json).type === "null";

/** One schema (and every schema inside it) as 3.0 writes it. */
export function schema30(input: unknown): any {
  if (Array.isArray(input)) return input.map(schema30);
  if (!input || typeof input !== "object") return input;
  let s: Json = { ...(input as Json) };
  if (typeof s.$ref === "string" && Object.keys(s).length > 1) {
    const { $ref, ...rest } = s;
    s = { ...rest, allOf: [{ $ref }, ...(rest.allOf ?? [])] };
  }
  let nullable = s.nullable === true;
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t: string) => t !== "null");
    nullable ||= types.length < s.type.length;
    if (types.length === 1) s.type = types[0];
    else {
      delete s.type;
      if (types.length > 1) s.anyOf = [...types.map((type: string) => ({ type })), ...(s.anyOf ?? [])];
    }
  } else if (s.type === "null") {
    delete s.type;
    nullable = true;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    if (!Array.isArray(s[key]) || !s[key].some(isNullSchema)) continue;
    const rest = s[key].filter((b: unknown) => !isNullSchema(b));
    nullable = true;
    delete s[key];
    if (rest.length === 1) {
      const only = rest[0] as Json;
      s = only.$ref !== undefined ? { ...s, allOf: [only, ...(s.allOf ?? [])] } : { ...only, ...s };
    } else if (rest.length > 1) s[key] = rest;
  }
  if ("const" in s) {
    if (s.const === null) nullable = true;
    else s.enum = [s.const];
    delete s.const;
  }
  if (Array.isArray(s.enum) && s.enum.includes(null)) {
    s.enum = s.enum.filter((v: unknown) => v !== null);
    nullable = true;
    if (s.enum.length === 0) delete s.enum;
  }
  if (Array.isArray(s.examples)) {
    if (s.examples.length > 0 && s.example === undefined) s.example = s.examples[0];
    delete s.examples;
  }
  for (const [key, bound] of [
    ["exclusiveMinimum", "minimum"],
    ["exclusiveMaximum", "maximum"],
  ] as const)
    if (typeof s[key] === "number") {
      s[bound] = s[key];
      s[key] = true;
    }
  if (s.patternProperties && typeof s.patternProperties === "object") {
    const [first] = Object.values(s.patternProperties as Json);
    if (s.additionalProperties === undefined && first !== undefined) s.additionalProperties = first;
    delete s.patternProperties;
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (DROPPED.has(k) || k === "nullable") continue;
    if (k === "properties")
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([n, c]) => [n, schema30(c)]));
    else if (k === "example" || k === "enum" || k === "default" || k === "required" || k.startsWith("x-"))
      out[k] = v;
    else if (k === "items" || k === "not" || k === "allOf" || k === "anyOf" || k === "oneOf")
      out[k] = schema30(v);
    else if (k === "additionalProperties") out[k] = typeof v === "object" ? schema30(v) : v;
    else out[k] = v;
  }
  if (nullable) out.nullable = true;
  return out;
}

/** Every `schema` below an operation, parameter, header or media type, as 3.0 writes it. */
function walk(value: unknown): any {
  if (Array.isArray(value)) return value.map(walk);
  if (!value || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json))
    out[k] = k === "schema" ? schema30(v) : k === "examples" || k === "example" ? v : walk(v);
  return out;
}

/** The document as OpenAPI 3.0.3: the same operations, components and names. */
export function toOpenApi30(doc: Json): Json {
  const { jsonSchemaDialect: _dialect, webhooks: _webhooks, ...rest } = doc;
  const { identifier: _identifier, ...license } = doc.info?.license ?? {};
  const components = doc.components ?? {};
  return {
    ...rest,
    openapi: OPENAPI_30_VERSION,
    info: { ...doc.info, ...(doc.info?.license ? { license } : {}) },
    paths: walk(doc.paths),
    components: {
      ...walk(components),
      schemas: Object.fromEntries(
        Object.entries((components.schemas ?? {}) as Json).map(([n, s]) => [n, schema30(s)]),
      ),
    },
  };
}
