import { Elysia, t } from "elysia";
import { listTemplates } from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

/** The template gallery (approved templates only). */
export function templateRoutes(deps: AppDeps, guard: Guard) {
  return new Elysia().get(
    "/api/v1/templates",
    async ({ request }) => {
      await guard(request, "sites:write");
      return { templates: await listTemplates(deps) };
    },
    {
      response: {
        200: t.Object({
          templates: t.Array(t.Object({ slug: t.String(), name: t.String(), description: t.String() })),
        }),
        ...errors(401, 403),
      },
      detail: {
        summary: "List gallery templates (pass `slug` as `template` to create a site)",
        security: bearer,
        tags: ["sites"],
      },
    },
  );
}
