import {
  type TBoolean,
  type TInteger,
  type TObject,
  type TProperties,
  Type,
  TypeGuard,
} from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ERROR_STATUS, type ErrorCode, validationError } from "@site/domain/core";
import { t } from "elysia";

/** The code a bare status stands for in `errors(…)`: the generic code of that status. */
const GENERIC_CODE: Partial<Record<number, ErrorCode>> = {
  400: "VALIDATION_ERROR",
  401: "UNAUTHORIZED",
  402: "QUOTA_EXCEEDED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  429: "RATE_LIMITED",
  500: "INTERNAL_ERROR",
  501: "NOT_CONFIGURED",
  502: "RENDERER_ERROR",
  504: "TIMEOUT",
};

/** The contract's error body whose `code` is one of `codes` (all of them one HTTP status). */
export function errorBodyOf(codes: readonly ErrorCode[]) {
  return t.Object(
    {
      error: t.Object({
        code: t.UnionEnum([...codes] as [ErrorCode, ...ErrorCode[]], { examples: [codes[0]] }),
        message: t.String({ description: "what went wrong, for people" }),
        details: t.Optional(t.Unknown({ description: "for validation: which field and why" })),
      }),
    },
    { description: `Error: ${codes.join(", ")}` },
  );
}

/**
 * The error responses a route can answer, by status. Give a status for its generic code (400
 * VALIDATION_ERROR, 401 UNAUTHORIZED, 403 FORBIDDEN, 404 NOT_FOUND…) or a code of the taxonomy
 * (`"SLUG_TAKEN"` adds 409): the OpenAPI document lists each status's codes as an enum.
 */
export function errors(...answers: (number | ErrorCode)[]) {
  const byStatus = new Map<number, Set<ErrorCode>>();
  for (const answer of answers) {
    const status = typeof answer === "number" ? answer : ERROR_STATUS[answer];
    const code =
      typeof answer === "number"
        ? (GENERIC_CODE[answer] ??
          (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => ERROR_STATUS[c] === answer))
        : answer;
    if (!code) throw new Error(`errors(): no error code answers with status ${answer}`);
    const set = byStatus.get(status) ?? new Set<ErrorCode>();
    set.add(code);
    byStatus.set(status, set);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [status, errorBodyOf([...codes])]),
  ) as Record<number, ReturnType<typeof errorBodyOf>>;
}

/**
 * The same error responses as OpenAPI response objects, for routes that document themselves in
 * `detail` (the delivery route, whose success answers are bytes, not JSON).
 */
export function errorResponses(...answers: (number | ErrorCode)[]) {
  return Object.fromEntries(
    Object.entries(errors(...answers)).map(([status, schema]) => [
      status,
      {
        description: schema.description ?? "Error",
        content: { "application/json": { schema: JSON.parse(JSON.stringify(schema)) } },
      },
    ]),
  );
}

/** The bearer security requirement for OpenAPI. */
export const bearer = [{ bearerAuth: [] as string[] }];

/** An integer query parameter: decimal digits on the wire, the model's number (and bounds) in the handler. */
function queryInteger(field: string, model: TInteger) {
  const bounds = { minimum: model.minimum, maximum: model.maximum };
  return Type.Transform(
    Type.Union([Type.String({ pattern: "^[0-9]*$" }), Type.Integer(bounds)], {
      ...bounds,
      description: model.description,
      default: model.default,
    }),
  )
    .Decode((raw) => {
      if (raw === "") return undefined;
      const n = Number(raw);
      // Elysia decodes each parameter alone and drops its name from range errors: say it here.
      if (!Value.Check(model, n))
        throw validationError(field, `must be between ${model.minimum} and ${model.maximum}`);
      return n;
    })
    .Encode((n) => n ?? "");
}

/** A boolean query parameter: 1/true or 0/false on the wire (empty is false). */
function queryBoolean(model: TBoolean) {
  return Type.Transform(
    Type.Union(
      [
        Type.Union([
          Type.Literal("1"),
          Type.Literal("0"),
          Type.Literal("true"),
          Type.Literal("false"),
          Type.Literal(""),
        ]),
        Type.Boolean(),
      ],
      {
        description: model.description,
      },
    ),
  )
    .Decode((raw) => raw === true || raw === "1" || raw === "true")
    .Encode((b) => b);
}

/**
 * A domain query model as a route's `query`: query strings arrive as text, so integer and boolean
 * properties get a strict decoding (digits only; 1/0/true/false) and keep the model's bounds. Typed
 * as the model because the handler sees the decoded values.
 */
export function queryOf<T extends TObject>(model: T): T {
  const properties: TProperties = {};
  for (const [name, schema] of Object.entries(model.properties)) {
    const wire = TypeGuard.IsInteger(schema)
      ? queryInteger(name, schema)
      : TypeGuard.IsBoolean(schema)
        ? queryBoolean(schema)
        : schema;
    properties[name] = TypeGuard.IsOptional(schema) ? Type.Optional(wire) : wire;
  }
  return Type.Object(properties) as unknown as T;
}
