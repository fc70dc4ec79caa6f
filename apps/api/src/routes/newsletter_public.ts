import { AppError, escapeHtml } from "@site/domain/core";
import {
  confirmSubscription,
  createSubscribeLimits,
  type MailContext,
  PublicSubscribeBody,
  publicSubscribe,
  readNewsletterToken,
  unsubscribe,
} from "@site/domain/newsletters";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errorResponses, errors } from "../schemas.ts";

const tags = ["public"];

function page(title: string, body: string, status = 200): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>${escapeHtml(title)}</h1>${body}</body></html>`,
    {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy":
          "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
      },
    },
  );
}

const html = (description: string) => ({
  200: { description, content: { "text/html": { schema: { type: "string" } } } },
  ...errorResponses(400),
});

/** The newsletter's public doors (no token): the subscribe form, the confirm link, unsubscribe. */
export function newsletterPublicRoutes(deps: AppDeps & MailContext) {
  const limits = deps.subscribeLimits ?? createSubscribeLimits();
  return new Elysia()
    .use(operationMacros)
    .post(
      "/api/v1/public/sites/:slug/subscribe",
      async ({ params, body, set }) => {
        await publicSubscribe(deps, limits, params.slug, body.email);
        set.status = 202;
        return {
          accepted: true as const,
          message: "If this address can subscribe, a confirmation mail is on its way.",
        };
      },
      {
        operation: "subscribeToNewsletter",
        public: true,
        body: PublicSubscribeBody,
        response: {
          202: t.Object({ accepted: t.Literal(true), message: t.String() }),
          ...errors(400, 404, 429),
        },
        detail: {
          summary: "Subscribe to a published site's newsletter (double opt-in)",
          description:
            "202 whatever the address's state (new, pending, active, unsubscribed or bounced), so the answer reveals nothing; a new or unsubscribed address gets a confirmation mail (a pending one again at most every 10 minutes). 404 while the site is unpublished. Rate-limited per site (60 a minute) and per address (5 an hour): 429 with Retry-After.",
          tags,
        },
      },
    )
    .get(
      "/api/v1/public/newsletter/confirm",
      async ({ query }) => {
        const r = await confirmSubscription(deps, query.token);
        if (r.status !== "active")
          return page(
            "Not subscribed",
            `<p>${escapeHtml(r.email)} is ${escapeHtml(r.status)}; sign up again on the site.</p>`,
          );
        return page(
          "Subscription confirmed",
          `<p>${escapeHtml(r.email)} will receive the newsletter. Every mail has a link to unsubscribe.</p>`,
        );
      },
      {
        operation: "confirmSubscription",
        public: true,
        query: t.Object({
          token: t.String({ maxLength: 300, description: "the token of the confirmation mail's link" }),
        }),

        detail: {
          summary: "Confirm a subscription (the link of the confirmation mail)",
          tags,
          responses: html("a page saying so"),
        } as never,
      },
    )
    .get(
      "/api/v1/public/newsletter/unsubscribe",
      ({ query }) => {
        if (!readNewsletterToken(deps, "unsubscribe", query.token))
          throw new AppError("VALIDATION_ERROR", "token: this link is not valid or has expired", [
            { field: "token", message: "invalid or expired" },
          ]);
        const action = `/api/v1/public/newsletter/unsubscribe?token=${encodeURIComponent(query.token)}`;
        // A GET never unsubscribes (link scanners follow links): the button POSTs (RFC 8058 §1).
        return page(
          "Unsubscribe",
          `<p>Stop receiving this newsletter?</p><form method="post" action="${escapeHtml(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
        );
      },
      {
        operation: "getUnsubscribePage",
        public: true,
        query: t.Object({ token: t.String({ maxLength: 300 }) }),

        detail: {
          summary: "The unsubscribe page (a button that POSTs; a GET changes nothing)",
          tags,
          responses: html("a page with the unsubscribe button"),
        } as never,
      },
    )
    .post(
      "/api/v1/public/newsletter/unsubscribe",
      async ({ query, request }) => {
        const r = await unsubscribe(deps, query.token);
        if ((request.headers.get("accept") ?? "").includes("text/html"))
          return page(
            "Unsubscribed",
            `<p>${escapeHtml(r.email)} will not receive this newsletter any more.</p>`,
          );
        return Response.json({ unsubscribed: true });
      },
      {
        operation: "unsubscribe",
        public: true,
        query: t.Object({ token: t.String({ maxLength: 300 }) }),
        response: { 200: t.Object({ unsubscribed: t.Literal(true) }), ...errors(400) },
        detail: {
          summary: "Unsubscribe (RFC 8058 one-click POST, or the unsubscribe page's button)",
          description:
            "The body (List-Unsubscribe=One-Click) is not required. Idempotent. A browser (Accept: text/html) gets a page.",
          tags,
        },
      },
    );
}
