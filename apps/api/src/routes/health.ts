import { sql } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";
import { AppError } from "@site/domain";

/** GET /healthz: 200 when the database answers. */
export function healthRoutes(deps: AppDeps) {
  return new Elysia().get(
    "/healthz",
    async () => {
      try {
        await deps.db.execute(sql`select 1`);
      } catch {
        throw new AppError("INTERNAL_ERROR", "database unreachable");
      }
      return { status: "ok" as const };
    },
    {
      response: { 200: t.Object({ status: t.Literal("ok") }), ...errors(500) },
      detail: { summary: "Health", tags: ["operations"] },
    },
  );
}
