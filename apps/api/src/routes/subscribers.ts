import { Elysia, t } from "elysia";
import { getOwnSite } from "@site/domain/sites";
import {
  AddSubscriberBody,
  addSubscriber,
  deleteSubscriber,
  ImportAnswer,
  ImportSubscribersBody,
  importSubscribers,
  listSubscribers,
  type MailContext,
  SubscriberAnswer,
  SubscriberListQuery,
  SubscriberPage,
} from "@site/domain/newsletters";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

const base = "/api/v1/sites/:siteId/subscribers";
const tags = ["newsletters"];

/** A site's newsletter subscribers: add one, import many (JSON or CSV), list, delete. */
export function subscriberRoutes(deps: AppDeps & MailContext, auth: AuthMacros) {
  const site = async (principal: Parameters<typeof getOwnSite>[1], siteId: string) =>
    (await getOwnSite(deps, principal, siteId)).id;
  return new Elysia()
    .use(auth)
    .get(
      base,
      async ({ principal, params, query }) =>
        listSubscribers(deps, await site(principal, params.siteId), query),
      {
        scope: "content:read",
        query: queryOf(SubscriberListQuery),
        response: { 200: SubscriberPage, ...errors(400, 401, 403, 404) },
        detail: { summary: "List a site's subscribers (newest first, optionally by status)", tags },
      },
    )
    .post(
      base,
      async ({ principal, params, body, query, set }) => {
        const siteId = await site(principal, params.siteId);
        const skipInvalid = query.skipInvalid === "1" || query.skipInvalid === "true";
        if (typeof body === "string") {
          set.status = 200;
          return importSubscribers(deps, siteId, { csv: body, status: query.status }, { skipInvalid });
        }
        if ("subscribers" in body) {
          set.status = 200;
          return importSubscribers(deps, siteId, { json: body }, { skipInvalid });
        }
        const { subscriber, created } = await addSubscriber(deps, siteId, body);
        set.status = created ? 201 : 200;
        return { subscriber };
      },
      {
        scope: "content:write",
        // text/csv arrives as text; JSON as an object (one subscriber, or `subscribers: [...]`).
        parse: ({ request, contentType }) =>
          contentType?.startsWith("text/csv") ? request.text() : undefined,
        body: t.Union(
          [
            AddSubscriberBody,
            ImportSubscribersBody,
            t.String({ description: "text/csv with an email column (and optionally name)" }),
          ],
          {
            description:
              "One subscriber {email, name?, status?}; many as {subscribers: [{email, name?}], status?}; or text/csv whose first row names an email column (and optionally name).",
          },
        ),
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
          ...errors(400, 401, 403, 404),
        },
        detail: {
          summary: "Add a subscriber, or import many (JSON or CSV), upserting by normalised address",
          description:
            "Addresses are trimmed and lowercased; one already there keeps its status (an unsubscribe or a bounce stands) and takes the new name. A new address is active, or pending with status: pending (a double opt-in mail is sent). Any malformed row answers 400 whose details list each row (row number and reason) and nothing is stored, unless ?skipInvalid=1. At most 10,000 rows or 2 MB of CSV.",
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
        scope: "content:write",
        response: { 204: t.Null(), ...errors(401, 403, 404) },
        detail: { summary: "Delete a subscriber", tags },
      },
    );
}
