import { type Static, Type } from "@sinclair/typebox";
import { named, pageOf } from "@site/domain/core";

// One model per shape: the collection routes, the MCP tools and the TypeScript types all read these.

/** The types a collection field may have. */
export const FIELD_TYPES = ["text", "richtext", "number", "boolean", "date", "image", "link"] as const;

/** The most fields a collection may have. */
export const MAX_FIELDS = 50;

/** A field of a collection. */
export const CollectionField = Type.Object({
  key: Type.String({
    pattern: "^[a-z][a-zA-Z0-9]{0,63}$",
    description: "lower camel case, at most 64 characters",
    error: "a field key: lower camel case (photoUrl), at most 64 characters",
  }),
  type: Type.Union(
    [
      Type.Literal("text"),
      Type.Literal("richtext"),
      Type.Literal("number"),
      Type.Literal("boolean"),
      Type.Literal("date"),
      Type.Literal("image"),
      Type.Literal("link"),
    ],
    {
      description:
        "text (plain, ≤5,000), richtext (Markdown, ≤100,000), number, boolean, date (YYYY-MM-DD or ISO 8601 with offset), image (a bare /api/media/<key> of the site's library; signed at read), link (site path, page:<id> or URL; stored as a page reference)",
      error: `one of ${FIELD_TYPES.join(", ")}`,
    },
  ),
  required: Type.Optional(Type.Boolean({ description: "items must have a value (default false)" })),
});
/** A field of a collection. */
export type CollectionField = Static<typeof CollectionField>;

/** The body of PUT …/collections/<key>: creates or updates the definition. */
export const CollectionDefinition = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: "plain text, 1 to 100 characters" }),
  fields: Type.Array(CollectionField, {
    maxItems: MAX_FIELDS,
    description: `at most ${MAX_FIELDS}, unique keys`,
  }),
});
/** The body of PUT …/collections/<key>. */
export type CollectionDefinition = Static<typeof CollectionDefinition>;

/** A collection as listed. */
export const CollectionSummary = Type.Object({
  key: Type.String({ examples: ["team"] }),
  name: Type.String(),
  fields: Type.Array(CollectionField),
  itemCount: Type.Integer(),
});
/** A collection as listed. */
export type CollectionSummary = Static<typeof CollectionSummary>;

/** One collection: the answer of defining it (PUT …/collections/<key>, define_collection). */
export const CollectionAnswer = named("CollectionAnswer", Type.Object({ collection: CollectionSummary }));

/** A site's collections (GET …/collections, list_collections). */
export const CollectionList = named(
  "CollectionList",
  Type.Object({ collections: Type.Array(CollectionSummary) }),
);

/** The delete_collection tool's answer (REST answers 204 with no body). */
export const CollectionDeleted = named(
  "CollectionDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    key: Type.String({ description: "the collection that is gone, with its items" }),
  }),
);

const Values = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "field key → value of the field's type (null clears an optional field); image values are read as signed URLs, link values as current paths",
  examples: [{ name: "Ada", photo: "/api/media/site-media/<site_id>/ada.webp", profile: "/team/ada" }],
});

/** An item of a collection as read. */
export const CollectionItem = named(
  "CollectionItem",
  Type.Object({
    id: Type.String({ format: "uuid" }),
    position: Type.Integer(),
    values: Values,
    updatedAt: Type.String({ description: "ISO 8601 UTC, microseconds" }),
  }),
);
/** An item of a collection as read. */
export type CollectionItem = Static<typeof CollectionItem>;

/** The body of POST …/items (all values) and PATCH …/items/<id> (merged into the item's values). */
export const ItemValues = Type.Object({ values: Values });
/** The body of an item write. */
export type ItemValues = Static<typeof ItemValues>;

/** A page of a collection's items in position order. */
export const ItemPage = named("CollectionItemPage", pageOf("items", CollectionItem));

/** Items of a collection written or reordered together (PUT …/items/order, upsert_collection_items). */
export const CollectionItemList = named(
  "CollectionItemList",
  Type.Object({ items: Type.Array(CollectionItem) }),
);

/** One item written (POST …/items, PATCH …/items/<itemId>, update_collection_item). */
export const CollectionItemAnswer = named("CollectionItemAnswer", Type.Object({ item: CollectionItem }));

/** The delete_collection_item tool's answer (REST answers 204 with no body). */
export const CollectionItemDeleted = named(
  "CollectionItemDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    itemId: Type.String({ format: "uuid", description: "the collection item that is gone" }),
  }),
);

/** The body of PUT …/items/order. */
export const ItemOrderBody = Type.Object({
  itemIds: Type.Array(Type.String(), {
    maxItems: 100_000,
    description: "every item id of the collection, each once, in the new order",
  }),
});
/** The body of PUT …/items/order. */
export type ItemOrderBody = Static<typeof ItemOrderBody>;
