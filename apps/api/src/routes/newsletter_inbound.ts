import { AppError, safeEqual } from "@site/domain/core";
import { MAX_INBOUND_BYTES, processInboundReport, processSesNotification } from "@site/domain/newsletters";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/**
 * Where the operator's mail server hands over what comes back to the bounce address
 * (MAIL_BOUNCE_ADDRESS): delivery status notifications and abuse reports, as message/rfc822, behind
 * OPERATOR_TOKEN (decision 1112). The token is checked before the body is read.
 */
export function newsletterInboundRoutes(deps: AppDeps) {
  const token = deps.config.operatorToken;
  return new Elysia()
    .use(operationMacros)
    .post(
      "/api/v1/newsletter/inbound/ses",
      async ({ request }) => {
        const length = Number(request.headers.get("content-length") ?? 0);
        if (length > 256 * 1024)
          throw new AppError("VALIDATION_ERROR", "body: at most 256 KiB (an SNS message)", [
            { field: "body", message: "too large" },
          ]);
        const raw = await request.text();
        if (raw.length > 256 * 1024)
          throw new AppError("VALIDATION_ERROR", "body: at most 256 KiB (an SNS message)", [
            { field: "body", message: "too large" },
          ]);
        return { accepted: true as const, ...(await processSesNotification(deps, raw)) };
      },
      {
        operation: "receiveSesNotification",
        public: true,
        parse: "none",
        response: {
          200: t.Object({
            accepted: t.Literal(true),
            sns: t.String(),
            report: t.Union([t.Literal("delivery-status"), t.Literal("feedback-report"), t.Literal("other")]),
            status: t.Union([t.String(), t.Null()]),
            kind: t.Union([t.Literal("hard"), t.Literal("soft"), t.Literal("policy"), t.Null()]),
            action: t.Union([t.Literal("bounced"), t.Literal("unsubscribed"), t.Literal("none")]),
            changed: t.Integer(),
          }),
          ...errors(400, 403),
        },
        detail: {
          summary: "Amazon SES bounces and complaints through an SNS HTTPS subscription",
          description:
            "Subscribe this URL to the SNS topic SES publishes bounces, complaints and deliveries to. The SNS signature is verified (SignatureVersion 1 or 2, the signing certificate fetched from a host of NEWSLETTER_SNS_CERT_HOSTS); anything else answers 403 and changes nothing. A SubscriptionConfirmation is confirmed. A Bounce is classified as the inbound route classifies a DSN, a Complaint unsubscribes, a Delivery changes nothing.",
          tags: ["newsletters"],
          security: [],
        } as never,
      },
    )
    .post(
      "/api/v1/newsletter/inbound",
      async ({ request, set }) => {
        const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
        if (!token || !bearer || !safeEqual(bearer, token))
          throw new AppError(
            "UNAUTHORIZED",
            token
              ? "this route needs Authorization: Bearer <OPERATOR_TOKEN>"
              : "OPERATOR_TOKEN is not set: the inbound route is closed",
            undefined,
            { "www-authenticate": 'Bearer realm="operators"' },
          );
        const length = Number(request.headers.get("content-length") ?? 0);
        if (length > MAX_INBOUND_BYTES)
          throw new AppError("VALIDATION_ERROR", `body: at most ${MAX_INBOUND_BYTES} bytes`, [
            { field: "body", message: "too large" },
          ]);
        const raw = new Uint8Array(await request.arrayBuffer());
        const result = await processInboundReport(deps, raw);
        set.status = 202;
        return { accepted: true as const, ...result };
      },
      {
        operation: "receiveInboundReport",
        operatorToken: true,
        parse: "none",
        response: {
          202: t.Object({
            accepted: t.Literal(true),
            report: t.Union([t.Literal("delivery-status"), t.Literal("feedback-report"), t.Literal("other")]),
            status: t.Union([t.String(), t.Null()]),
            kind: t.Union([t.Literal("hard"), t.Literal("soft"), t.Literal("policy"), t.Null()]),
            action: t.Union([t.Literal("bounced"), t.Literal("unsubscribed"), t.Literal("none")]),
            changed: t.Integer(),
          }),
          ...errors(400),
        },
        detail: {
          summary: "Hand over a bounce (RFC 3464 DSN) or a complaint (RFC 5965 abuse report)",
          description:
            "For the operator's mail server (an alias or pipe on MAIL_BOUNCE_ADDRESS): the raw message as message/rfc822, with Authorization: Bearer <OPERATOR_TOKEN> (else 401). The recipient is found through the tagged envelope sender (local+<tag>@domain) the report came back to, or that the original message's headers carry. The Status is read as RFC 3463 classifies it: 5.1.x and 5.2.1 (hard) mark that subscriber bounced; 4.x.x and 5.2.2 (soft) bounce it once NEWSLETTER_SOFT_BOUNCE_LIMIT of them fall within 30 days; 5.7.x (policy: the receiver refused the sender) changes no subscriber and counts in the campaign's refusedByPolicy. Each is kept in the subscriber's bounce log. A complaint marks it unsubscribed; a message naming no recipient of ours changes nothing. 202 for a readable message; 400 for one that cannot be read.",
          tags: ["newsletters"],
          requestBody: {
            required: true,
            content: { "message/rfc822": { schema: { type: "string", format: "binary" } } },
          },
        } as never,
      },
    );
}
