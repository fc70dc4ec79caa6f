import { AppError } from "@site/domain/core";
import {
  addSubscriber,
  deleteSubscriber,
  getSubscriber,
  ImportAnswer,
  importSubscribers,
  listSubscribers,
  type MailContext,
  reactivateSubscriber,
  SubscriberAnswer,
  SubscriberDetailAnswer,
  SubscriberListQuery,
  SubscriberPage,
  SubscribersPostBody,
  subscriberView,
} from "@site/domain/newsletters";
import { getOwnSite } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

const base = "/api/v1/sites/:siteId/subscribers";
const tags = ["newsletters"];

/** A site's newsletter subscribers: add one, import many (JSON or CSV), list, delete. */
export function subscriberRoutes(deps: AppDeps & MailContext, auth: AuthMacros) {
  const site = async (principal: Parameters<typeof getOwnSite>[1], siteId: string) =>
    getOwnSite(deps, principal, siteId);
  return new Elysia()
    .use(auth)
    .get(
      base,
      async ({ principal, params, query }) =>
        listSubscribers(deps, await site(principal, params.siteId), query),
      {
        operation: "listSubscribers",
        scope: "content:read",
        query: queryOf(SubscriberListQuery),
        response: { 200: SubscriberPage, ...errors(400, 404) },
        detail: { summary: "List a site's subscribers (newest first, optionally by status)", tags },
      },
    )
    .post(
      base,
      async ({ principal, params, body, query, set }) => {
        const owned = await site(principal, params.siteId);
        const skipInvalid = query.skipInvalid === "1" || query.skipInvalid === "true";
        const forms = [body.email, body.subscribers, body.csv].filter((f) => f !== undefined).length;
        if (forms !== 1)
          throw new AppError(
            "VALIDATION_ERROR",
            "body: give exactly one of email, subscribers or csv (or a text/csv body)",
            [{ field: "body", message: "exactly one of email, subscribers, csv" }],
          );
        if (body.csv !== undefined) {
          set.status = 200;
          return importSubscribers(
            deps,
            owned,
            { csv: body.csv, status: body.confirm ? "pending" : (body.status ?? query.status) },
            { skipInvalid },
          );
        }
        if (body.subscribers !== undefined) {
          set.status = 200;
          return importSubscribers(
            deps,
            owned,
            { json: { subscribers: body.subscribers, status: body.confirm ? "pending" : body.status } },
            { skipInvalid },
          );
        }
        const { subscriber, created } = await addSubscriber(deps, owned, {
          email: body.email!,
          name: body.name,
          status: body.status,
          source: body.source,
          confirm: body.confirm,
        });
        set.status = created ? 201 : 200;
        return { subscriber };
      },
      {
        operation: "addSubscribers",
        scope: "content:write",
        // text/csv arrives as text; JSON as an object (one subscriber, or `subscribers: [...]`).
        // A text/csv body arrives as text (Elysia's text parser): it is the csv field.
        transform(ctx) {
          if (typeof ctx.body === "string") ctx.body = { csv: ctx.body };
        },
        body: SubscribersPostBody,
        query: t.Object({
          skipInvalid: t.Optional(
            t.String({
              description:
                "1: import the valid rows and list the others (default: any bad row answers 400, nothing stored)",
            }),
          ),
          status: t.Optional(
            t.Union([t.Literal("active"), t.Literal("pending")], {
              description: "for CSV imports: the status of new rows (default active)",
            }),
          ),
        }),
        response: {
          200: t.Union([SubscriberAnswer, ImportAnswer]),
          201: SubscriberAnswer,
          ...errors(400, 404),
        },
        detail: {
          summary: "Add a subscriber, or import many (JSON or CSV), upserting by normalised address",
          description:
            "Addresses are trimmed and lowercased; one already there keeps its status (an unsubscribe or a bounce stands) and takes the new name. A new address is active, or pending with status: pending (a double opt-in mail is sent). Any malformed row answers 400 whose details list each row (row number and reason) and nothing is stored, unless ?skipInvalid=1. At most 10,000 rows or 2 MB of CSV.",
          tags,
        },
      },
    )
    .get(
      `${base}/:subscriberId`,
      async ({ principal, params }) => ({
        subscriber: await getSubscriber(
          deps,
          await site(principal, params.siteId),
          params.subscriberId,
          subscriberView,
        ),
      }),
      {
        operation: "getSubscriber",
        scope: "content:read",
        response: { 200: SubscriberDetailAnswer, ...errors(404) },
        detail: {
          summary: "Read a subscriber with its bounce log (newest first: when, status, kind, diagnostic)",
          tags,
        },
      },
    )
    .post(
      `${base}/:subscriberId/reactivate`,
      async ({ principal, params }) => ({
        subscriber: await reactivateSubscriber(
          deps,
          await site(principal, params.siteId),
          params.subscriberId,
          subscriberView,
        ),
      }),
      {
        operation: "reactivateSubscriber",
        scope: "content:write",
        response: { 200: SubscriberDetailAnswer, ...errors(404) },
        detail: {
          summary: "Make a bounced subscriber active again (its earlier soft bounces no longer count)",
          description:
            "An admin's undo of a bounce (the address works again). Any other status is answered unchanged. The bounce log is kept.",
          tags,
        },
      },
    )
    .delete(
      `${base}/:subscriberId`,
      async ({ principal, params, set }) => {
        await deleteSubscriber(deps, await site(principal, params.siteId), params.subscriberId);
        set.status = 204;
        return null;
      },
      {
        operation: "deleteSubscriber",
        scope: "content:write",
        response: { 204: t.Null(), ...errors(404) },
        detail: { summary: "Delete a subscriber", tags },
      },
    );
}
