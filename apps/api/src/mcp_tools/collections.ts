import { Type } from "@sinclair/typebox";
import {
  CollectionDeleted,
  CollectionItemAnswer,
  CollectionItemDeleted,
  CollectionItemList,
  CollectionList,
  deleteCollection,
  deleteItem,
  getOwnSite,
  ItemOrderBody,
  ItemValues,
  listCollections,
  reorderItems,
  updateItem,
} from "@site/domain/sites";
import { Id, SiteId, UUID_PATTERN } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** A collection's key, as define_collection takes it. */
export const CollectionKey = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,62}$",
  maxLength: 63,
  description: "the collection key (lowercase letters, digits, hyphens), from list_collections",
});
const ItemId = Id("an item of the collection, from list_collection_items");

/** Collections beyond define/upsert/list: the same models and domain functions as routes/collections.ts. */
export const COLLECTION_TOOLS: Tool[] = [
  tool({
    name: "list_collections",
    title: "List a site's collections",
    description:
      "Every collection of the site: key, name, typed fields and how many items it holds. Read one's items with list_collection_items. Needs content:read.",
    operation: "listCollections",
    output: CollectionList,
    input: Type.Object({ siteId: SiteId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await listCollections(deps, site) };
    },
  }),
  tool({
    name: "delete_collection",
    title: "Delete a collection and its items",
    description:
      "Deletes a collection with all its items at once; pages that render it show nothing. NOT_FOUND for a key the site has no collection under. Needs content:write.",
    operation: "deleteCollection",
    output: CollectionDeleted,
    input: Type.Object({ siteId: SiteId, collection: CollectionKey }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await deleteCollection(deps, site, args.collection);
      return {
        value: { deleted: true, key: args.collection },
        note: `Collection ${args.collection} and its items are deleted; list_collections shows the others.`,
      };
    },
  }),
  tool({
    name: "reorder_collection_items",
    title: "Reorder a collection's items",
    description:
      "Puts the collection's items in the given order in one write. itemIds must be exactly the collection's items, each once (read them with list_collection_items); otherwise nothing changes and the error names the missing, unknown and repeated ids. Needs content:write.",
    operation: "reorderCollectionItems",
    output: CollectionItemList,
    input: Type.Object({
      siteId: SiteId,
      collection: CollectionKey,
      itemIds: Type.Array(Type.String({ pattern: UUID_PATTERN, maxLength: 36 }), {
        maxItems: ItemOrderBody.properties.itemIds.maxItems,
        description: ItemOrderBody.properties.itemIds.description,
      }),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const items = await reorderItems(deps, site, args.collection, { itemIds: args.itemIds });
      return { value: { items } };
    },
  }),
  tool({
    name: "update_collection_item",
    title: "Change one collection item",
    description:
      "Merges `values` into one item (null clears an optional field); the other fields keep theirs. Values are checked against the collection's fields and each wrong one is named (values.<field>). Image values are library `url`s (/api/media/<key>), link values site paths or page:<id>. To write many at once use upsert_collection_items. Needs content:write.",
    operation: "updateCollectionItem",
    output: CollectionItemAnswer,
    input: Type.Object({
      siteId: SiteId,
      collection: CollectionKey,
      itemId: ItemId,
      ...ItemValues.properties,
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const item = await updateItem(deps, site, args.collection, args.itemId, { values: args.values });
      return { value: { item } };
    },
  }),
  tool({
    name: "delete_collection_item",
    title: "Delete one collection item",
    description:
      "Deletes one item of a collection; the others keep their order. NOT_FOUND for an id that is not an item of this collection. Needs content:write.",
    operation: "deleteCollectionItem",
    output: CollectionItemDeleted,
    input: Type.Object({ siteId: SiteId, collection: CollectionKey, itemId: ItemId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await deleteItem(deps, site, args.collection, args.itemId);
      return {
        value: { deleted: true, itemId: args.itemId },
        note: `Item ${args.itemId} is deleted; list_collection_items shows the rest.`,
      };
    },
  }),
];
