import { toOpenAPISchema, unwrapSchema } from "@elysiajs/openapi/openapi";
import { Kind, type TSchema } from "@sinclair/typebox";
import type { AnyElysia } from "elysia";
import { ACCESS, type Access } from "./auth.ts";
import { TOOLS } from "./mcp_tools.ts";
import { errorResponses } from "./schemas.ts";

/** The OpenAPI version the document declares (and keeps: `const`, `type: [x, "null"]`, `examples`). */
export const OPENAPI_VERSION = "3.1.1";

type Json = Record<string, any>;

/** The document's fixed parts: what the API is, how to authenticate, its tag groups. */
const INFO = {
  title: "Site Content API",
  version: "1.0.0",
  description:
    "Create sites, fill their media library with real files, render web pages into 3D device mockups and read social performance. Paths under /api/v1 (except /api/v1/public) need `Authorization: Bearer <API_KEY>`; a request without a valid key answers 401 with `WWW-Authenticate: Bearer`. Errors are `{error:{code,message,details?}}`; each response lists the codes it can carry (`x-error-codes`, and an enum on `error.code`); `details` is an `ErrorDetails` (for validation, a list of `{field, message}`). Field names are camelCase, with one exception kept from the specification: a site (`Site`: `public_content_live`, `updated_at`) is snake_case, in every answer that carries one.",
  license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
};

/** A problem of `details` (validation: which field and why; page content: line and column). */
const FIELD_PROBLEM = {
  type: "object",
  description: "one refused input: the field (dotted path) and why; content problems add line and column",
  properties: {
    field: { type: "string", examples: ["name"] },
    message: { type: "string", examples: ["required"] },
    line: { type: "integer" },
    column: { type: "integer" },
    ref: { type: "string", description: "the reference that was refused, as written" },
  },
  additionalProperties: true,
};

/** `error.details`: validation problems as a list, or an object a code documents (e.g. CONFLICT's `references`). */
const ERROR_DETAILS = {
  description:
    "optional; for VALIDATION_ERROR a list of FieldProblem; for other codes an object the route documents (e.g. 409 CONFLICT `{references, total}` or `{templates}`)",
  anyOf: [
    { type: "array", items: { $ref: "#/components/schemas/FieldProblem" } },
    { type: "object", additionalProperties: true },
  ],
};

/**
 * The domain's models, named in components (a client generator gets one type each): a model declared
 * with `named("Site", …)` (its `title`; decision 1533) that a route answers or takes, or an MCP tool
 * answers, or that sits inside one of those. Every inline copy in an operation becomes a `$ref`, and
 * so does a named model inside another (UploadPreparation's `upload` is a SignedUpload). MCP tools
 * declare the same models as their output schemas; a tool that answers more than REST (an embed, an
 * etag, the webhooks told) declares a model composing REST's (`allOf`: REST's model by `$ref`, then
 * what the tool adds; decision 0051).
 */
export function namedModels(app: AnyElysia): Map<string, TSchema> {
  const roots: unknown[] = TOOLS.map((t) => t.output);
  // Every route of the app the docs plugin is part of (the generator reads the same list).
  const routes = (app as unknown as { getGlobalRoutes(): AnyElysia["routes"] }).getGlobalRoutes();
  for (const route of routes) roots.push(route.hooks?.response, route.hooks?.body);
  const out = new Map<string, TSchema>();
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (!value || typeof value !== "object" || seen.has(value)) return;
    seen.add(value);
    const s = value as Json;
    if (typeof s.title === "string" && Kind in s) {
      const other = out.get(s.title);
      if (other && JSON.stringify(modelJson(other)) !== JSON.stringify(modelJson(s as TSchema)))
        throw new Error(`two different models are named ${s.title}`);
      out.set(s.title, s as TSchema);
    }
    for (const [k, v] of Object.entries(s)) if (k !== "examples" && k !== "default") visit(v);
  };
  for (const root of roots) visit(root);
  return out;
}

const TAGS = [
  { name: "sites", description: "Sites and templates" },
  { name: "pages", description: "Pages of a site" },
  { name: "layout", description: "A site's header, footer and styles (read, then replace with If-Match)" },
  { name: "chrome", description: "The site shell's strings per locale, and the default locale" },
  { name: "collections", description: "Collections of structured items and their order" },
  { name: "links", description: "What a site's links name, and its broken links" },
  { name: "media", description: "The media library" },
  { name: "delivery", description: "Media delivery behind grants, and the signed upload" },
  { name: "screenshots", description: "Product screenshots in 3D device mockups" },
  { name: "social", description: "Social accounts, posts and performance" },
  { name: "newsletters", description: "Subscribers, campaigns, sending and inbound reports" },
  { name: "webhooks", description: "Webhook endpoints and their delivery log" },
  { name: "public", description: "Published sites, no token" },
  { name: "mcp", description: "Model Context Protocol for agents" },
  { name: "operations", description: "Health and readiness" },
];

/** Operations OpenAPI knows; WebSocket routes (`ws`) are left out. */
const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted: queued",
  "204": "No content",
  "206": "Partial content (a byte range)",
  "304": "Not modified",
};

/**
 * A domain model as JSON Schema, written as the document writes a response of it (Elysia's own
 * conversion: `anyOf [x, null]` is `type: [x, "null"]`, a union of literals an `enum`; then `finishSchema`). MCP tools declare their
 * output schemas with it, so a tool's output schema is the component, word for word. A composed model
 * (TypeBox `Intersect`) is written part by part, each as its own model, so a part that is a named model
 * reads as that component does (and the document names it by `$ref`).
 */
export function modelJson(model: TSchema): Json {
  const parts = (model as { allOf?: unknown }).allOf;
  if (Array.isArray(parts)) {
    const { allOf: _parts, ...outer } = model as Json;
    return { ...JSON.parse(JSON.stringify(outer)), allOf: parts.map((p) => modelJson(p as TSchema)) };
  }
  // The model itself, not a copy: Elysia tells a TypeBox union of literals (an enum) by its Kind symbol.
  return openAnswer(finishSchema(unwrapSchema(model as never, undefined, "output", OPENAPI_VERSION)));
}

/**
 * An answer's schema without the top-level `additionalProperties: false` Elysia writes into a response
 * model when it compiles a route's validator (in place, on first use): the document, and a tool's
 * output schema, then read the same before and after a route first ran. Answers may gain fields.
 */
function openAnswer(schema: Json): Json {
  if (schema?.additionalProperties !== false) return schema;
  const { additionalProperties: _added, ...rest } = schema;
  return rest;
}

/**
 * Builds the OpenAPI 3.1 document of an app from its routes' TypeBox schemas and `detail`, then
 * finishes it (see `finishOpenApiDocument`).
 */
export function buildOpenApiDocument(app: AnyElysia, opts: { publicBaseUrl: string }): Json {
  const raw = toOpenAPISchema(app, { staticFile: true }, undefined, undefined, OPENAPI_VERSION);
  return finishOpenApiDocument(namedModels(app), {
    openapi: OPENAPI_VERSION,
    info: INFO,
    servers: [{ url: opts.publicBaseUrl }],
    tags: TAGS,
    paths: raw.paths as Json,
    components: {
      schemas: raw.components.schemas ?? {},
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "an API key from `bun run admin key:create`",
        },
        operatorToken: {
          type: "http",
          scheme: "bearer",
          description: "the operator's OPERATOR_TOKEN (operator routes only)",
        },
      },
    },
  });
}

/**
 * What the generator leaves for a client generator to trip on, fixed in one pass:
 * - wildcard paths (`/api/media/*`) become a `{key}` path parameter;
 * - request bodies keep one content type (JSON, or what the route's own detail declares);
 * - query-string wire forms (`anyOf [string of digits, integer]`, `anyOf ["1"|"0"|…, boolean]`,
 *   Elysia's `string format integer`) become the plain integer, number or boolean they decode to;
 * - header parameters are named in HTTP's usual case (`if-match` becomes `If-Match`);
 * - every response has a description; error responses list their codes in `x-error-codes`;
 * - an operation with bearer security answers 401 with a `WWW-Authenticate: Bearer` header; a public
 *   one says so (`security: []`), an operator one names the operator token;
 * - what OpenAPI 3.1 (JSON Schema 2020-12) does not know goes: Elysia's `error` messages, `nullable`
 *   beside a `type` that already admits null; an enum of numbers is typed as one;
 * - error bodies' `details` is the named `ErrorDetails`; each of `models` is a named component.
 */
export function finishOpenApiDocument(models: Map<string, TSchema>, doc: Json): Json {
  const named = new Map<string, string>();
  for (const [name, model] of models) named.set(JSON.stringify(modelJson(model)), name);
  const paths: Json = {};
  for (const [rawPath, item] of Object.entries(doc.paths as Json)) {
    const path = rawPath.replace(/\/\*$/, "/{key}");
    const finished: Json = {};
    for (const [method, op] of Object.entries(item as Json))
      if (HTTP_METHODS.has(method)) finished[method] = nameSchemas(finishOperation(op, method, path), named);
    if (Object.keys(finished).length === 0) continue;
    paths[path] = { ...paths[path], ...finished };
  }
  const schemas: Json = {};
  for (const [name, s] of Object.entries((doc.components?.schemas ?? {}) as Json))
    schemas[name] = finishSchema(s);
  // A named model's own body names the models it holds (its top level is itself, kept as written).
  for (const [json, name] of named) schemas[name] = nameInner(JSON.parse(json), named);
  schemas.FieldProblem = FIELD_PROBLEM;
  schemas.ErrorDetails = ERROR_DETAILS;
  return { ...doc, paths, components: { ...doc.components, schemas } };
}

/** Replaces every inline copy of a named model with a `$ref` to it (outside `examples`). */
function nameSchemas(value: unknown, named: Map<string, string>): any {
  if (Array.isArray(value)) return value.map((v) => nameSchemas(v, named));
  if (!value || typeof value !== "object") return value;
  const name = named.get(JSON.stringify(value));
  if (name) return { $ref: `#/components/schemas/${name}` };
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json))
    out[k] = k === "examples" || k === "example" ? v : nameSchemas(v, named);
  return out;
}

/** `nameSchemas` below the top level of a named model. */
function nameInner(model: Json, named: Map<string, string>): Json {
  return Object.fromEntries(
    Object.entries(model).map(([k, v]) => [
      k,
      k === "examples" || k === "example" ? v : nameSchemas(v, named),
    ]),
  );
}

function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function finishOperation(op: Json, method: string, path: string): Json {
  const out: Json = { ...op };
  if (out.parameters)
    out.parameters = out.parameters.map((p: Json) => ({
      ...p,
      // Elysia sees headers in lower case; documents name them as HTTP does (`If-Match`).
      name: p.in === "header" ? headerCase(p.name) : p.name,
      schema: finishSchema(p.schema),
    }));
  if (path.endsWith("/{key}") && !out.parameters?.some((p: Json) => p.name === "key")) {
    out.parameters = [
      {
        name: "key",
        in: "path",
        required: true,
        description: "the storage key, slashes included (`site-media/<site_id>/<name>`)",
        schema: { type: "string" },
      },
      ...(out.parameters ?? []),
    ];
  }
  if (out.requestBody?.content) {
    const content = out.requestBody.content as Json;
    const keep = content["application/json"] ? { "application/json": content["application/json"] } : content;
    out.requestBody = {
      ...out.requestBody,
      content: Object.fromEntries(
        Object.entries(keep).map(([type, media]) => [type, { ...media, schema: finishSchema(media.schema) }]),
      ),
    };
    if (out.requestBody.description === undefined) delete out.requestBody.description;
  }
  const responses: Json = {};
  for (const [status, response] of Object.entries((out.responses ?? {}) as Json))
    responses[status] = finishResponse(response, status);
  // How the route is called, as its access option declared it (auth.ts): the answers that follows.
  const access = out[ACCESS] as Access | undefined;
  delete out[ACCESS];
  const secured = access?.kind === "scope" || access?.kind === "anyKey" || access?.kind === "ownBearer";
  if (secured || access?.kind === "operatorToken") {
    const given = responses["401"];
    responses["401"] = withAuthenticateHeader(
      given?.content ? given : given ? unauthorizedResponse() : authAnswer(401),
    );
  }
  if (access?.kind === "scope") responses["403"] = withForbidden(responses["403"]);
  if (secured && method === "post" && path.startsWith("/api/v1/")) withIdempotencyKey(out, responses);
  if (!Object.keys(responses).some((s) => s.startsWith("2") || s.startsWith("3")))
    responses["200"] = { description: STATUS_TEXT["200"] };
  out.responses = responses;
  const codes = Object.values(responses).flatMap((r: Json) => r["x-error-codes"] ?? []);
  if (codes.length > 0) out["x-error-codes"] = [...new Set(codes)];
  return out;
}

function finishResponse(response: Json, status: string): Json {
  const out: Json = { ...response };
  // The generator writes a void response's content as `{type, description}`: no body at all.
  if (out.content && typeof out.content.type === "string") delete out.content;
  if (out.content) {
    const content: Json = {};
    for (const [type, media] of Object.entries(out.content as Json))
      content[type] = { ...media, schema: openAnswer(finishSchema(media.schema)) };
    out.content = content;
    const schema = (content["application/json"] as Json | undefined)?.schema;
    const codes = errorCodesOf(schema);
    if (codes) {
      out["x-error-codes"] = codes;
      // A code is one of these, nothing is its default.
      schema.properties.error.properties.code = { type: "string", enum: codes, examples: [codes[0]] };
      schema.properties.error.properties.details = { $ref: "#/components/schemas/ErrorDetails" };
    }
  }
  if (!out.description || /^Response for status/.test(out.description))
    out.description =
      out.content?.["application/json"]?.schema?.description ?? STATUS_TEXT[status] ?? `HTTP ${status}`;
  return out;
}

/** The `error.code` enum of an error body schema, or null for anything else. */
function errorCodesOf(schema: Json | undefined): string[] | null {
  const code = schema?.properties?.error?.properties?.code;
  if (!code) return null;
  if (Array.isArray(code.enum)) return code.enum;
  if (typeof code.const === "string") return [code.const];
  return null;
}

/** The answer of `status` an access option adds (401 UNAUTHORIZED, 403 FORBIDDEN), as `errors(status)` writes it. */
function authAnswer(status: 401 | 403): Json {
  return finishResponse(errorResponses(status)[status], String(status));
}

/** A scoped route's 403: FORBIDDEN first, then the codes the route answers with 403 itself. */
function withForbidden(given: Json | undefined): Json {
  const codes: string[] = given?.["x-error-codes"] ?? [];
  if (!given?.content || codes.length === 0) return authAnswer(403);
  if (codes.includes("FORBIDDEN")) return given;
  const merged = ["FORBIDDEN", ...codes];
  const description = `Error: ${merged.join(", ")}`;
  const schema = structuredClone(given.content["application/json"].schema);
  schema.description = description;
  schema.properties.error.properties.code = { type: "string", enum: merged, examples: [merged[0]] };
  return {
    ...given,
    description,
    "x-error-codes": merged,
    content: { ...given.content, "application/json": { ...given.content["application/json"], schema } },
  };
}

function unauthorizedResponse(): Json {
  return errorResponse(["UNAUTHORIZED"], "Error: UNAUTHORIZED (missing, invalid or revoked API key)");
}

/** A response in the contract's error body whose `code` is one of `codes`. */
function errorResponse(codes: string[], description: string): Json {
  return {
    description,
    "x-error-codes": codes,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: {
                code: { type: "string", enum: codes, examples: [codes[0]] },
                message: { type: "string" },
                details: { $ref: "#/components/schemas/ErrorDetails" },
              },
            },
          },
        },
      },
    },
  };
}

const IDEMPOTENCY_409 =
  "CONFLICT: the Idempotency-Key was used with another request (method, path or body), a request with it is still running (Retry-After: when its hold ends), or its request was done but its answer was not kept";

/**
 * An authenticated POST accepts `Idempotency-Key` (decisions 0832, 1410–1413): the header parameter, the
 * `Idempotent-Replayed` header of a replayed answer, and 409 CONFLICT (merged into a 409 the route
 * already answers, such as SLUG_TAKEN).
 */
function withIdempotencyKey(op: Json, responses: Json): void {
  op.parameters = [
    ...(op.parameters ?? []).filter((p: Json) => !(p.in === "header" && /^idempotency-key$/i.test(p.name))),
    {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Makes the request safe to retry (Stripe's semantics). Within 24 hours, the same key with the same method, path and body answers the first answer again (status and body, with `Idempotent-Replayed: true`) without doing the work twice; the same key with another request answers 409 CONFLICT, and so does a retry while the first request still runs (`Retry-After` says when its hold ends). A 429, and a 5xx before the work began, are not kept: a retry runs again; a 5xx after the work began is kept. An answer over IDEMPOTENCY_MAX_ANSWER_BYTES, or past the organization's IDEMPOTENCY_ORG_BYTES a day, is not kept, yet the key still holds: its replay answers 409 CONFLICT saying so. Operations that change nothing (link translation, estimateOnly) keep nothing. Keys belong to the API key that sent them. At most 255 printable ASCII characters (else 400).",
      schema: {
        type: "string",
        minLength: 1,
        maxLength: 255,
        examples: ["5f1c8e7a-2b8c-4d1e-9a53-0e6f2f4c9b11"],
      },
    },
  ];
  for (const [status, response] of Object.entries(responses as Record<string, Json>))
    if (/^[234]/.test(status) && status !== "429")
      responses[status] = {
        ...response,
        headers: {
          ...response.headers,
          "Idempotent-Replayed": {
            description:
              "`true` when this is the kept answer of an earlier request with the same Idempotency-Key",
            schema: { type: "string", enum: ["true"] },
          },
        },
      };
  const given = responses["409"] as Json | undefined;
  const codes: string[] = given?.["x-error-codes"] ?? [];
  if (!given || codes.length === 0) {
    responses["409"] = errorResponse(["CONFLICT"], `Error: ${IDEMPOTENCY_409}`);
    return;
  }
  if (codes.includes("CONFLICT")) return;
  const merged = [...codes, "CONFLICT"];
  const schema = structuredClone(given.content["application/json"].schema);
  schema.properties.error.properties.code = { type: "string", enum: merged, examples: [merged[0]] };
  responses["409"] = {
    ...given,
    description: `${given.description}; or ${IDEMPOTENCY_409}`,
    "x-error-codes": merged,
    content: { ...given.content, "application/json": { ...given.content["application/json"], schema } },
  };
}

function withAuthenticateHeader(response: Json): Json {
  return {
    ...response,
    headers: {
      ...response.headers,
      "WWW-Authenticate": {
        description: 'always `Bearer` (with `error="invalid_token"` when a key was given but refused)',
        schema: { type: "string", examples: ['Bearer realm="site-content-api"'] },
      },
    },
  };
}

const WIRE_BOOLEANS = new Set(["1", "0", "true", "false", ""]);

/**
 * A union branch that only says how a number or boolean travels in a query string: Elysia's coercible
 * `string` (format integer/numeric), the routes' digits-only string, or the 1/0/true/false spellings.
 */
function isWireForm(s: unknown): boolean {
  const x = s as Json;
  if (x?.type !== "string") return false;
  if (x.format === "integer" || x.format === "numeric" || x.format === "number") return true;
  if (typeof x.pattern === "string" && /^\^\[0-9\][*+]\$$/.test(x.pattern)) return true;
  return Array.isArray(x.enum) && x.enum.every((v: unknown) => WIRE_BOOLEANS.has(String(v)));
}

/** Collapses Elysia's coercion unions and recurses; everything else is kept as generated. */
export function finishSchema(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(finishSchema);
  if (!schema || typeof schema !== "object") return schema;
  const s = schema as Json;
  if (Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((x: unknown) => !isWireForm(x));
    if (rest.length === 1 && rest.length < s.anyOf.length) {
      const { anyOf: _drop, ...outer } = s;
      return finishSchema({ ...outer, ...rest[0] });
    }
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    // Elysia's custom validation message (TypeBox `error`) is no JSON Schema keyword.
    if (k === "error" && typeof v === "string") continue;
    // OpenAPI 3.0's `nullable` is no 3.1 keyword: the type says null (`type: [x, "null"]`).
    if (k === "nullable") {
      if (v === true && typeof s.type === "string") out.type = [s.type, "null"];
      continue;
    }
    if (k === "type" && out.type !== undefined) continue;
    if (k === "properties" || k === "patternProperties" || k === "$defs") {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([n, c]) => [n, finishSchema(c)]));
    } else if (k === "examples" || k === "enum" || k === "const" || k === "required" || k === "default") {
      out[k] = v;
    } else out[k] = typeof v === "object" ? finishSchema(v) : v;
  }
  // An enum of numbers generated with `type: string` (a union of literals) is typed as its values are.
  if (
    out.type === "string" &&
    Array.isArray(out.enum) &&
    out.enum.every((e: unknown) => typeof e === "number")
  )
    out.type = out.enum.every((e: number) => Number.isInteger(e)) ? "integer" : "number";
  return out;
}
