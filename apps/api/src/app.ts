import { Elysia } from "elysia";
import { prefixedId } from "@site/domain";
import type { AppDeps } from "./deps.ts";
import { renderError } from "./errors.ts";
import { mcpRoutes } from "./mcp.ts";
import { createGuard } from "./guard.ts";
import { docsRoutes } from "./routes/docs.ts";
import { healthRoutes } from "./routes/health.ts";
import { deliveryRoutes } from "./routes/delivery.ts";
import { mediaRoutes } from "./routes/media.ts";
import { pageRoutes } from "./routes/pages.ts";
import { publicPageRoutes } from "./routes/public_pages.ts";
import { loginPageRoutes } from "../../render-daemon/src/login/mod.ts";
import { screenshotRoutes } from "./routes/screenshots.ts";
import { screenshotStyleRoutes } from "./routes/screenshot_styles.ts";
import { siteRoutes } from "./routes/sites.ts";
import { socialRoutes } from "./routes/social.ts";
import { templateRoutes } from "./routes/templates.ts";

const requestIds = new WeakMap<Request, string>();

/** Builds the API app from its dependencies; `app.handle(request)` serves without a port. */
export function createApp(deps: AppDeps) {
  const guard = createGuard(deps);
  const idOf = (request: Request) => requestIds.get(request) ?? "unknown";
  return new Elysia()
    .onRequest(({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const id = given && /^[\w.-]{1,100}$/.test(given) ? given : prefixedId("req");
      requestIds.set(request, id);
      set.headers["x-request-id"] = id;
    })
    .onError(({ code, error, request }) => renderError(code, error, deps.log, idOf(request)))
    .onAfterResponse(({ request, set }) => {
      deps.log.debug("request", {
        requestId: idOf(request),
        method: request.method,
        url: request.url,
        status: set.status,
      });
    })
    .use(docsRoutes())
    .use(healthRoutes(deps))
    .use(siteRoutes(deps, guard))
    .use(screenshotRoutes(deps, guard))
    .use(screenshotStyleRoutes(deps, guard))
    .use(loginPageRoutes(deps))
    .use(socialRoutes(deps, guard))
    .use(templateRoutes(deps, guard))
    .use(pageRoutes(deps, guard))
    .use(mediaRoutes(deps, guard))
    .use(deliveryRoutes(deps))
    .use(publicPageRoutes(deps))
    .use(mcpRoutes(deps));
}

/** The built app's type. */
export type App = ReturnType<typeof createApp>;
