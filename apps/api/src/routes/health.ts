import { dependencyChecks, readinessProbe, readinessResponse } from "@site/runtime";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

const CheckResult = t.Object({ ok: t.Boolean(), ms: t.Integer(), reason: t.Optional(t.String()) });

/**
 * GET /healthz: liveness only, answered at once whatever the dependencies do. GET /readyz: readiness
 * of the database, the queue and storage (writable), each check bounded by READY_CHECK_TIMEOUT_MS;
 * 200, or 503 naming what is not ready (decision 0801).
 */
export function healthRoutes(deps: AppDeps, opts: { stopping?: () => boolean } = {}) {
  const ready = readinessProbe(dependencyChecks(deps), { timeoutMs: deps.config.timeouts.readyCheckMs });
  return new Elysia()
    .use(operationMacros)
    .get("/healthz", () => ({ status: "ok" as const }), {
      operation: "getHealth",
      public: true,
      response: { 200: t.Object({ status: t.Literal("ok") }) },
      detail: { summary: "Liveness: answers at once", tags: ["operations"] },
    })
    .get(
      "/readyz",
      async () =>
        readinessResponse(opts.stopping?.() ? "stopping" : await ready(), deps.config.retryAfterSeconds, {
          "cache-control": "no-store",
        }),
      {
        operation: "getReadiness",
        public: true,
        response: {
          200: t.Object({ status: t.Literal("ready"), checks: t.Record(t.String(), CheckResult) }),
          ...errors(503),
        },
        detail: {
          summary: "Readiness: database, queue and storage usable (503 names what is not)",
          tags: ["operations"],
        },
      },
    );
}
