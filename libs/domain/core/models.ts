import { CloneType, type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AppError } from "./errors.ts";

/** The bounds of a keyset listing's page size: default 50, 1..100. */
export const PAGE_LIMIT = { default: 50, min: 1, max: 100 } as const;

/** The query of a keyset listing (sites, posts, a media library). */
export const ListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ description: "nextCursor from the previous page" })),
  limit: Type.Optional(
    Type.Integer({
      minimum: PAGE_LIMIT.min,
      maximum: PAGE_LIMIT.max,
      default: PAGE_LIMIT.default,
      description: `page size, ${PAGE_LIMIT.min}..${PAGE_LIMIT.max}, default ${PAGE_LIMIT.default}`,
    }),
  ),
});
/** A checked listing query. */
export type ListQuery = Static<typeof ListQuery>;

/** A keyset page's cursor: the next page's `cursor`, or null on the last page. */
export const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: "pass as cursor for the next page; null on the last page",
});

/**
 * The one page wrapper of every keyset listing: `{<key>: item[], nextCursor}` (`{images, nextCursor}`,
 * `{sites, nextCursor}`…), so every list answers its cursor the same way.
 */
export function pageOf<K extends string, T extends TSchema>(key: K, item: T) {
  return Type.Object({ [key]: Type.Array(item), nextCursor: NextCursor } as {
    [P in K]: ReturnType<typeof Type.Array<T>>;
  } & { nextCursor: typeof NextCursor });
}

/**
 * Signed-upload instructions: PUT the bytes to `url` with exactly `headers` before `expiresInSeconds`
 * run out (the site library's and the social library's uploads alike).
 */
export const SignedUpload = named(
  "SignedUpload",
  Type.Object({
    url: Type.String({ description: "where to PUT the bytes" }),
    method: Type.Literal("PUT"),
    headers: Type.Record(Type.String(), Type.String(), {
      description: "send exactly these headers with the PUT",
    }),
    expiresInSeconds: Type.Integer({ examples: [7200] }),
  }),
);
/** Signed-upload instructions. */
export type SignedUpload = Static<typeof SignedUpload>;

/**
 * Checks a value against a model where no framework did (MCP tool arguments, CLI input): the value
 * typed by the model, or 400 VALIDATION_ERROR naming each field.
 */
export function checkInput<S extends TSchema>(model: S, value: unknown): Static<S> {
  if (Value.Check(model, value)) return value;
  const seen = new Set<string>();
  const details: { field: string; message: string }[] = [];
  for (const e of Value.Errors(model, value)) {
    const field = e.path.replace(/^\//, "").replace(/\//g, ".") || "arguments";
    if (seen.has(field)) continue;
    seen.add(field);
    // A model may say what it expects in words (`error`); TypeBox's own message otherwise.
    const said = (e.schema as { error?: unknown }).error;
    details.push({ field, message: typeof said === "string" ? said : e.message });
  }
  throw new AppError("VALIDATION_ERROR", details.map((d) => `${d.field}: ${d.message}`).join("; "), details);
}

/**
 * A model the OpenAPI document names: one component, referenced by `$ref` wherever a route or an MCP
 * tool answers it. Its name sits on the model as its JSON Schema `title` (decision 1533), so naming a
 * new model is one word at its declaration, not a row in a list far from it.
 */
export function named<T extends TSchema>(name: string, model: T): T {
  return CloneType(model, { title: name });
}
