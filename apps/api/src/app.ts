import { prefixedId } from "@site/domain/core";
import { openMailer } from "@site/domain/newsletters";
import { Elysia } from "elysia";
import { requestMetrics } from "./api_metrics.ts";
import { authMacros, principalCache } from "./auth.ts";
import { corsPlugin } from "./cors.ts";
import type { AppDeps } from "./deps.ts";
import { renderError } from "./errors.ts";
import { idempotencyHooks } from "./idempotency.ts";
import { assertBoundedInput } from "./input_bounds.ts";
import { mcpRoutes } from "./mcp.ts";
import { bindToolScopes } from "./mcp_tools/tool.ts";
import { TOOLS } from "./mcp_tools.ts";
import { declaredOperations } from "./operations.ts";
import { campaignRoutes } from "./routes/campaigns.ts";
import { chromeRoutes } from "./routes/chrome.ts";
import { clipRoutes } from "./routes/clips.ts";
import { collectionRoutes } from "./routes/collections.ts";
import { deliveryRoutes } from "./routes/delivery.ts";
import { docsRoutes } from "./routes/docs.ts";
import { healthRoutes } from "./routes/health.ts";
import { layoutRoutes } from "./routes/layout.ts";
import { linkRoutes } from "./routes/links.ts";
import { mediaRoutes } from "./routes/media.ts";
import { newsletterInboundRoutes } from "./routes/newsletter_inbound.ts";
import { newsletterPublicRoutes } from "./routes/newsletter_public.ts";
import { pageOrderRoutes } from "./routes/page_order.ts";
import { pageRoutes } from "./routes/pages.ts";
import { publicPageRoutes } from "./routes/public_pages.ts";
import { publicSiteRoutes } from "./routes/public_site.ts";
import { queueDashboardRoutes } from "./routes/queue_dashboard.ts";
import { loginPageRoutes } from "./routes/screenshot_sign_in.ts";
import { screenshotStyleRoutes } from "./routes/screenshot_styles.ts";
import { screenshotRoutes } from "./routes/screenshots.ts";
import { siteRoutes } from "./routes/sites.ts";
import { socialOAuthCallbackRoutes, socialRoutes } from "./routes/social.ts";
import { subscriberRoutes } from "./routes/subscribers.ts";
import { templateRoutes } from "./routes/templates.ts";
import { webhookRoutes } from "./routes/webhooks.ts";

const requestIds = new WeakMap<Request, string>();

/**
 * Untrusted input is bounded at the edge, for every route: after parsing, before validation (whose error
 * mapping recurses) and before anything reaches PostgreSQL (which refuses NUL in text).
 */
function boundInput({ body, query, params }: { body: unknown; query: unknown; params: unknown }): void {
  assertBoundedInput(params, "params");
  assertBoundedInput(query, "query");
  assertBoundedInput(body, "body");
}

/**
 * Builds the API app from its dependencies; `app.handle(request)` serves without a port. The operators'
 * queue dashboard (bull-board at /admin/queues, behind OPERATOR_TOKEN, with Redis only) mounts once loaded.
 */
export function createApp(deps: AppDeps) {
  // One principal per request, read by the auth macros and by the Idempotency-Key hooks (decision 0832).
  const principals = principalCache(deps);
  const auth = authMacros(deps, principals);
  // Confirmation and test mails leave from here; campaign deliveries from the newsletter sender.
  const mail = { ...deps, mailer: deps.mailer ?? openMailer(deps.config, deps.log) };
  const idOf = (request: Request) => requestIds.get(request) ?? "unknown";
  const app = new Elysia()
    .onRequest(({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const id = given && /^[\w.-]{1,100}$/.test(given) ? given : prefixedId("req");
      requestIds.set(request, id);
      set.headers["x-request-id"] = id;
    })
    .onError(({ code, error, request }) =>
      renderError(code, error, deps.log, idOf(request), {
        retryAfterSeconds: deps.config.retryAfterSeconds,
        authorization: request.headers.get("authorization"),
      }),
    )
    .onTransform({ as: "global" }, boundInput)
    .use(idempotencyHooks(deps, principals))
    // Answers by route template (API_METRICS_PORT, decision 0711); CORS for /api/v1 (decision 0712).
    .use(requestMetrics(deps.metrics))
    .use(corsPlugin(deps.config.corsOrigins))
    .onAfterResponse(({ request, set }) => {
      deps.log.debug("request", {
        requestId: idOf(request),
        method: request.method,
        url: request.url,
        status: set.status,
      });
    })
    .use(docsRoutes({ publicBaseUrl: deps.config.publicBaseUrl }))
    .use(healthRoutes(deps))
    .use(siteRoutes(deps, auth))
    .use(screenshotRoutes(deps, auth))
    .use(screenshotStyleRoutes(deps, auth))
    .use(loginPageRoutes(deps))
    .use(clipRoutes(deps, auth))
    .use(socialRoutes(deps, auth))
    .use(socialOAuthCallbackRoutes(deps))
    .use(templateRoutes(deps, auth))
    .use(pageOrderRoutes(deps, auth))
    .use(pageRoutes(deps, auth))
    .use(layoutRoutes(deps, auth))
    .use(chromeRoutes(deps, auth))
    .use(collectionRoutes(deps, auth))
    .use(linkRoutes(deps, auth))
    .use(mediaRoutes(deps, auth))
    .use(webhookRoutes(deps, auth))
    .use(subscriberRoutes(mail, auth))
    .use(campaignRoutes(mail, auth))
    .use(newsletterPublicRoutes(mail))
    .use(newsletterInboundRoutes(deps))
    .use(deliveryRoutes(deps))
    .use(publicPageRoutes(deps))
    .use(publicSiteRoutes(deps))
    .use(mcpRoutes(deps, auth))
    .use(queueDashboardRoutes(deps.config, deps.log));
  // Every route declares its operation id and access once; each MCP tool needs its route's scope.
  bindToolScopes(TOOLS, declaredOperations(app));
  return app;
}

/** The built app's type. */
export type App = ReturnType<typeof createApp>;
