import { ListQuery } from "@site/domain/core";
import {
  CollectionAnswer,
  CollectionDefinition,
  CollectionItemAnswer,
  CollectionItemList,
  CollectionList,
  createItem,
  defineCollection,
  deleteCollection,
  deleteItem,
  getOwnSite,
  ItemOrderBody,
  ItemPage,
  ItemValues,
  listCollections,
  listItems,
  reorderItems,
  updateItem,
} from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

const base = "/api/v1/sites/:siteId/collections";
const tags = ["collections"];

/** Collections (structured content: team, products, posts): definitions and items. */
export function collectionRoutes(deps: AppDeps, auth: AuthMacros) {
  const site = async (principal: Parameters<typeof getOwnSite>[1], siteId: string) =>
    getOwnSite(deps, principal, siteId);
  return new Elysia()
    .use(auth)
    .get(base, async ({ principal, params }) => listCollections(deps, await site(principal, params.siteId)), {
      operation: "listCollections",
      scope: "content:read",
      response: { 200: CollectionList, ...errors(404) },
      detail: { summary: "List a site's collections", tags },
    })
    .put(
      `${base}/:key`,
      async ({ principal, params, body }) => ({
        collection: await defineCollection(deps, await site(principal, params.siteId), params.key, body),
      }),
      {
        operation: "defineCollection",
        scope: "content:write",
        body: CollectionDefinition,
        response: { 200: CollectionAnswer, ...errors(400, 404) },
        detail: {
          summary: "Create a collection or update its definition",
          description:
            "The key is lowercase letters, digits and hyphens. A change existing items would break (a field removed or retyped while items hold values for it, a field made required while items lack it) answers 400 saying how many items, per field, and changes nothing.",
          tags,
        },
      },
    )
    .delete(
      `${base}/:key`,
      async ({ principal, params, set }) => {
        await deleteCollection(deps, await site(principal, params.siteId), params.key);
        set.status = 204;
        return null;
      },
      {
        operation: "deleteCollection",
        scope: "content:write",
        response: { 204: t.Null(), ...errors(404) },
        detail: { summary: "Delete a collection and its items", tags },
      },
    )
    .get(
      `${base}/:key/items`,
      async ({ principal, params, query }) =>
        listItems(deps, await site(principal, params.siteId), params.key, query, "member"),
      {
        operation: "listCollectionItems",
        scope: "content:read",
        query: queryOf(ListQuery),
        response: { 200: ItemPage, ...errors(400, 404) },
        detail: {
          summary: "List a collection's items in position order",
          description:
            "Keyset pagination: every page costs the same however deep. Image values come back signed with a member grant, link values as the pages' current paths.",
          tags,
        },
      },
    )
    .post(
      `${base}/:key/items`,
      async ({ principal, params, body, set }) => {
        const item = await createItem(deps, await site(principal, params.siteId), params.key, body);
        set.status = 201;
        return { item };
      },
      {
        operation: "addCollectionItem",
        scope: "content:write",
        body: ItemValues,
        response: { 201: CollectionItemAnswer, ...errors(400, 404) },
        detail: {
          summary: "Add an item at the end of a collection",
          description: "Values are checked against the fields; each wrong one is named (values.<field>).",
          tags,
        },
      },
    )
    .put(
      `${base}/:key/items/order`,
      async ({ principal, params, body }) => ({
        items: await reorderItems(deps, await site(principal, params.siteId), params.key, body),
      }),
      {
        operation: "reorderCollectionItems",
        scope: "content:write",
        body: ItemOrderBody,
        response: { 200: CollectionItemList, ...errors(400, 404) },
        detail: {
          summary: "Reorder a collection's items",
          description:
            "itemIds must be exactly the collection's items, each once: otherwise 400 naming the missing, unknown and repeated ids, and nothing changes.",
          tags,
        },
      },
    )
    .patch(
      `${base}/:key/items/:itemId`,
      async ({ principal, params, body }) => ({
        item: await updateItem(deps, await site(principal, params.siteId), params.key, params.itemId, body),
      }),
      {
        operation: "updateCollectionItem",
        scope: "content:write",
        body: ItemValues,
        response: { 200: CollectionItemAnswer, ...errors(400, 404) },
        detail: { summary: "Update an item (values merged; null clears an optional field)", tags },
      },
    )
    .delete(
      `${base}/:key/items/:itemId`,
      async ({ principal, params, set }) => {
        await deleteItem(deps, await site(principal, params.siteId), params.key, params.itemId);
        set.status = 204;
        return null;
      },
      {
        operation: "deleteCollectionItem",
        scope: "content:write",
        response: { 204: t.Null(), ...errors(404) },
        detail: { summary: "Delete an item", tags },
      },
    );
}
