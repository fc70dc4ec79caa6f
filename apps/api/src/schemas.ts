import { t } from "elysia";

/** The contract's error body. */
export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String({ examples: ["VALIDATION_ERROR"] }),
      message: t.String(),
      details: t.Optional(t.Unknown()),
    }),
  },
  { description: "Error: the contract's error body" },
);

/** Error responses for a route, by status. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<number, typeof ErrorBody>;
}

/** The bearer security requirement for OpenAPI. */
export const bearer = [{ bearerAuth: [] as string[] }];

/** A site as the API answers it. */
export const SiteSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  slug: t.String(),
  public_content_live: t.Boolean(),
  updated_at: t.String({
    description: "timestamp with microseconds and UTC offset",
    examples: ["2026-11-22T18:30:00.123456+00:00"],
  }),
});
