import { listTemplates, TemplateList } from "@site/domain/sites";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";

/** The template gallery (approved templates only). */
export function templateRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .get("/api/v1/templates", async () => ({ templates: await listTemplates(deps) }), {
      operation: "listTemplates",
      scope: "sites:write",
      response: {
        200: TemplateList,
      },
      detail: {
        summary: "List gallery templates (pass `slug` as `template` to create a site)",

        tags: ["sites"],
      },
    });
}
