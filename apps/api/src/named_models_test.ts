import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { SCOPES } from "@site/domain/core";
import { completeRender } from "@site/domain/screenshots";
import { sampleImage } from "@site/domain/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { modelJson, namedModels } from "./openapi_document.ts";

// Each shape declared once, with a name (issue 28 item 2; decision 0050): the domain's models are
// OpenAPI components, REST operations point at them, and MCP tools declare them as output schemas.

type Json = any;
let h: TestApp;
/** The models the document names (`named()` on the model), by name. */
let NAMED_MODELS: Record<string, TSchema> = {};
let mcp: AppServer;
let doc: Json;
let key: string;
let siteId: string;

/** The models the document names, by component name. */
const MODELS = [
  "Site",
  "MediaImage",
  "MediaLibraryPage",
  "AddedMediaFile",
  "SignedUpload",
  "UploadPreparation",
  "SitePage",
  "CollectionItem",
  "CollectionItemPage",
  "CollectionItemList",
  "SocialPostPage",
  "SocialMediaPage",
  "SubscriberPage",
  "CampaignPage",
  "SiteAnswer",
  "SocialPostAnswer",
  "SocialPostDetail",
  "CampaignAnswer",
  "PageList",
  "Chrome",
  "CollectionAnswer",
  "TranslatedLinks",
  "StyleList",
  "PageWrite",
  "LoginLink",
  "Template",
  "TemplateList",
  "LayoutState",
  "ScreenshotQueueAnswer",
  "Render",
  "ClipQueueAnswer",
  "Clip",
  "SubscriberAnswer",
  "TestCampaignAccepted",
  "SubscribedEndpoint",
  "WebhooksTold",
  "PublishAnswer",
  "LayoutAnswer",
  "ScreenshotQueued",
  "ScreenshotResult",
  "ClipQueued",
  "SubscriberAdded",
  "MediaDeleted",
  "PageDeleted",
  "SiteDeleted",
  "SocialAccountList",
  "SocialAccountAnswer",
  "ConnectStarted",
  "SocialAccountDisconnected",
  "WebhookList",
  "WebhookAnswer",
  "WebhookCreated",
  "WebhookSecretAnswer",
  "WebhookDeliveryPage",
  "WebhookRecoverAnswer",
  "WebhookDeleted",
  "WebhookRetryAccepted",
  "PageAnswer",
  "CollectionList",
  "CollectionItemAnswer",
  "BrokenLinkList",
  "SubscriberDetailAnswer",
  "CreatorInfoAnswer",
  "SocialMediaAnswer",
  "GeneratedSocialImages",
  "CollectionDeleted",
  "CollectionItemDeleted",
  "SubscriberDeleted",
  "CampaignDeleted",
  "SocialPostDeleted",
  "SocialMediaDeleted",
  "ErrorDetails",
  "FieldProblem",
];

/** Every MCP tool and the named model it answers (REST's, or one composing REST's; decision 0051). */
const TOOL_OUTPUTS: Record<string, string> = {
  list_media: "MediaLibraryPage",
  import_media_from_url: "AddedMediaFile",
  upload_media: "AddedMediaFile",
  delete_media: "MediaDeleted",
  list_sites: "SitePage",
  list_templates: "TemplateList",
  create_site: "SiteAnswer",
  publish_site: "PublishAnswer",
  unpublish_site: "PublishAnswer",
  list_pages: "PageList",
  reorder_pages: "PageList",
  create_page: "PageWrite",
  update_page: "PageWrite",
  delete_page: "PageDeleted",
  get_site_layout: "LayoutAnswer",
  update_site_layout: "LayoutAnswer",
  get_chrome_strings: "Chrome",
  set_chrome_strings: "Chrome",
  define_collection: "CollectionAnswer",
  list_collection_items: "CollectionItemPage",
  upsert_collection_items: "CollectionItemList",
  translate_links: "TranslatedLinks",
  list_screenshot_styles: "StyleList",
  queue_screenshot: "ScreenshotQueued",
  get_screenshot: "ScreenshotResult",
  create_screenshot_login_link: "LoginLink",
  create_clip: "ClipQueued",
  get_clip: "Clip",
  list_social_posts: "SocialPostPage",
  create_social_post: "SocialPostAnswer",
  get_social_post: "SocialPostDetail",
  get_social_performance: "PerformanceReport",
  update_social_post: "SocialPostAnswer",
  cancel_social_post: "SocialPostAnswer",
  list_social_media: "SocialMediaPage",
  list_subscribers: "SubscriberPage",
  add_subscriber: "SubscriberAdded",
  list_campaigns: "CampaignPage",
  create_campaign: "CampaignAnswer",
  send_campaign: "CampaignAnswer",
  send_test_campaign: "TestCampaignAccepted",
  get_site: "SiteAnswer",
  rename_site: "SiteAnswer",
  delete_site: "SiteDeleted",
  get_campaign: "CampaignAnswer",
  cancel_campaign: "CampaignAnswer",
  resume_campaign: "CampaignAnswer",
  list_social_accounts: "SocialAccountList",
  connect_social_account: "SocialAccountAnswer",
  start_social_connection: "ConnectStarted",
  confirm_social_connection: "SocialAccountAnswer",
  disconnect_social_account: "SocialAccountDisconnected",
  create_webhook: "WebhookCreated",
  list_webhooks: "WebhookList",
  rotate_webhook_secret: "WebhookSecretAnswer",
  list_webhook_deliveries: "WebhookDeliveryPage",
  recover_webhook_deliveries: "WebhookRecoverAnswer",
  update_webhook: "WebhookAnswer",
  delete_webhook: "WebhookDeleted",
  get_page: "PageAnswer",
  set_default_locale: "Chrome",
  list_broken_links: "BrokenLinkList",
  list_collections: "CollectionList",
  delete_collection: "CollectionDeleted",
  reorder_collection_items: "CollectionItemList",
  update_collection_item: "CollectionItemAnswer",
  delete_collection_item: "CollectionItemDeleted",
  get_subscriber: "SubscriberDetailAnswer",
  reactivate_subscriber: "SubscriberDetailAnswer",
  delete_subscriber: "SubscriberDeleted",
  update_campaign: "CampaignAnswer",
  delete_campaign: "CampaignDeleted",
  revoke_campaign_media: "CampaignAnswer",
  get_tiktok_creator_info: "CreatorInfoAnswer",
  delete_social_post: "SocialPostDeleted",
  add_social_media: "SocialMediaAnswer",
  delete_social_media: "SocialMediaDeleted",
  generate_social_images: "GeneratedSocialImages",
  get_webhook: "WebhookAnswer",
  retry_webhook_delivery: "WebhookRetryAccepted",
};

/** A schema with every `$ref` to a component replaced by the component (itself resolved). */
function resolved(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(resolved);
  if (!schema || typeof schema !== "object") return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === "string")
    return resolved(doc.components.schemas[ref.replace("#/components/schemas/", "")]);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolved(v)]));
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseSchema = (path: string, method: string, status: string) =>
  doc.paths[path][method].responses[status].content["application/json"].schema;

beforeAll(async () => {
  mcp = listenApp();
  h = await buildTestApp({ env: { PUBLIC_BASE_URL: mcp.base } });
  NAMED_MODELS = Object.fromEntries(namedModels(h.app));
  mcp.serve(h);
  doc = await (await h.call("GET", "/swagger/json")).json();
  ({ key } = await h.seedOrg({ siteLimit: 10, credits: 100, scopes: [...SCOPES] }));
  const res = await h.call("POST", "/api/v1/sites", {
    key,
    body: { name: "Named", slug: `named-${Date.now()}` },
  });
  siteId = ((await res.json()) as Json).site.id;
});
afterAll(async () => {
  mcp.stop();
  await h.close();
});

describe("the OpenAPI document names each model once", () => {
  test("components hold every named model, each the domain's model as declared", () => {
    for (const name of MODELS) expect(doc.components.schemas[name]).toBeDefined();
    for (const [name, model] of Object.entries(NAMED_MODELS))
      expect(resolved(doc.components.schemas[name])).toEqual(modelJson(model));
    // The name sits on the model (its title, decision 1533); the error shapes are the document's own.
    for (const name of MODELS.filter((n) => n !== "ErrorDetails" && n !== "FieldProblem"))
      expect({ name, title: NAMED_MODELS[name]?.title }).toEqual({ name, title: name });
    // A named model inside another is a $ref, not a second copy.
    expect(doc.components.schemas.UploadPreparation.properties.upload).toEqual(ref("SignedUpload"));
    expect(doc.components.schemas.MediaLibraryPage.properties.images.items).toEqual(ref("MediaImage"));
  });

  test("REST operations reference the models by $ref", () => {
    const media = "/api/v1/sites/{siteId}/media";
    expect(responseSchema(media, "get", "200")).toEqual(ref("MediaLibraryPage"));
    expect(responseSchema(`${media}/upload`, "post", "201")).toEqual(ref("UploadPreparation"));
    expect(responseSchema(`${media}/upload/{name}/complete`, "post", "200")).toEqual(ref("AddedMediaFile"));
    expect(responseSchema(`${media}/import-url`, "post", "201")).toEqual(ref("AddedMediaFile"));
    expect(responseSchema("/api/v1/social/media/upload", "post", "201").properties.upload).toEqual(
      ref("SignedUpload"),
    );
    expect(responseSchema("/api/v1/sites", "get", "200")).toEqual(ref("SitePage"));
    expect(doc.components.schemas.SitePage.properties.sites.items).toEqual(ref("Site"));
    expect(responseSchema("/api/v1/sites", "post", "201")).toEqual(ref("SiteAnswer"));
    expect(responseSchema("/api/v1/sites/{siteId}", "get", "200")).toEqual(ref("SiteAnswer"));
    expect(responseSchema("/api/v1/social/posts", "post", "201")).toEqual(ref("SocialPostAnswer"));
    expect(responseSchema("/api/v1/sites/{siteId}/campaigns", "post", "201")).toEqual(ref("CampaignAnswer"));
    expect(responseSchema("/api/v1/social/posts", "get", "200")).toEqual(ref("SocialPostPage"));
    expect(responseSchema("/api/v1/social/media", "get", "200")).toEqual(ref("SocialMediaPage"));
    expect(responseSchema("/api/v1/sites/{siteId}/subscribers", "get", "200")).toEqual(ref("SubscriberPage"));
    expect(responseSchema("/api/v1/sites/{siteId}/campaigns", "get", "200")).toEqual(ref("CampaignPage"));
    expect(responseSchema("/api/v1/sites/{siteId}/collections/{key}/items", "get", "200")).toEqual(
      ref("CollectionItemPage"),
    );
    expect(doc.components.schemas.CollectionItemPage.properties.items.items).toEqual(ref("CollectionItem"));
    expect(responseSchema("/api/v1/sites/{siteId}/collections/{key}/items/order", "put", "200")).toEqual(
      ref("CollectionItemList"),
    );
    expect(responseSchema("/api/v1/templates", "get", "200")).toEqual(ref("TemplateList"));
    expect(doc.components.schemas.TemplateList.properties.templates.items).toEqual(ref("Template"));
    for (const action of ["publish", "unpublish"])
      expect(responseSchema(`/api/v1/sites/{siteId}/${action}`, "post", "200")).toEqual(ref("SiteAnswer"));
    for (const method of ["get", "put"])
      expect(responseSchema("/api/v1/sites/{siteId}/layout", method, "200")).toEqual(ref("LayoutState"));
    for (const status of ["200", "202"]) {
      expect(responseSchema(`${media}/screenshot`, "post", status)).toEqual(ref("ScreenshotQueueAnswer"));
      expect(responseSchema("/api/v1/social/media/clips", "post", status)).toEqual(ref("ClipQueueAnswer"));
    }
    expect(responseSchema(`${media}/screenshot/{renderId}`, "get", "200")).toEqual(ref("Render"));
    expect(responseSchema("/api/v1/social/media/clips/{clipId}", "get", "200")).toEqual(ref("Clip"));
    expect(responseSchema("/api/v1/social/performance", "get", "200")).toEqual(ref("PerformanceReport"));
    expect(responseSchema("/api/v1/sites/{siteId}/subscribers", "post", "201")).toEqual(
      ref("SubscriberAnswer"),
    );
    expect(responseSchema("/api/v1/sites/{siteId}/campaigns/{campaignId}/test", "post", "202")).toEqual(
      ref("TestCampaignAccepted"),
    );
    // No operation carries an inline copy of a named model.
    const text = JSON.stringify(doc.paths);
    for (const [name, model] of Object.entries(NAMED_MODELS))
      expect({ name, inline: text.includes(JSON.stringify(modelJson(model))) }).toEqual({
        name,
        inline: false,
      });
  });

  test("a tool's answer that adds to REST's composes REST's model by $ref, never a copy of its fields", () => {
    const schemas = doc.components.schemas;
    const composed: Record<string, string[]> = {
      PublishAnswer: ["SiteAnswer"],
      LayoutAnswer: ["LayoutState"],
      ScreenshotQueued: ["ScreenshotQueueAnswer", "WebhooksTold"],
      ScreenshotResult: ["Render"],
      ClipQueued: ["ClipQueueAnswer", "WebhooksTold"],
      SubscriberAdded: ["SubscriberAnswer"],
    };
    for (const [name, parts] of Object.entries(composed)) {
      // An MCP output schema says `type: object` at its root (the SDK refuses one that does not).
      expect({ name, type: schemas[name].type }).toEqual({ name, type: "object" });
      expect(schemas[name].allOf.slice(0, parts.length)).toEqual(parts.map(ref));
    }
    expect(schemas.LayoutAnswer.allOf[1].properties.etag.type).toBe("string");
    expect(Object.keys(schemas.ScreenshotResult.allOf[1].properties).sort()).toEqual(["embed", "nextStep"]);
    expect(schemas.WebhooksTold.properties.webhooks.items).toEqual(ref("SubscribedEndpoint"));
  });

  test("every tag an operation uses is declared with a description", () => {
    const used = new Set<string>();
    for (const item of Object.values(doc.paths as Json))
      for (const op of Object.values(item as Json)) for (const tag of (op as Json).tags ?? []) used.add(tag);
    const declared = new Map((doc.tags as Json[]).map((t) => [t.name, t.description]));
    for (const tag of used)
      expect({ tag, description: declared.get(tag) ?? "" }).not.toEqual({ tag, description: "" });
    for (const [tag, description] of declared)
      expect({ tag, has: typeof description === "string" && description.length > 0 }).toEqual({
        tag,
        has: true,
      });
  });
});

describe("MCP tools answer the same models", () => {
  test("tools/list declares each tool's output schema as its REST component, and answers fit it", async () => {
    const client = await mcpClient(mcp, key);
    try {
      const { tools } = await client.listTools();
      // Every tool declares its model, and the list names each tool once.
      expect(tools.filter((t) => !t.outputSchema).map((t) => t.name)).toEqual([]);
      expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(TOOL_OUTPUTS).sort());
      expect(Object.keys(TOOL_OUTPUTS)).toHaveLength(80);
      for (const [tool, model] of Object.entries(TOOL_OUTPUTS)) {
        const listed = tools.find((t) => t.name === tool);
        expect({ tool, schema: listed?.outputSchema }).toEqual({ tool, schema: resolved(ref(model)) });
      }
      // The SDK client checks structuredContent against the declared output schema: these pass it.
      const png = sampleImage("png", { width: 32, height: 20, size: 1024 });
      const up = await callTool(client, "upload_media", {
        siteId,
        dataBase64: Buffer.from(png).toString("base64"),
        alt: "a logo",
      });
      expect(up.isError).toBeUndefined();
      expect(Object.keys(up.structuredContent).sort()).toEqual(
        Object.keys(doc.components.schemas.AddedMediaFile.properties).sort(),
      );
      expect(up.structuredContent.embed).toContain(`src="${up.structuredContent.url}"`);
      const listed = await callTool(client, "list_media", { siteId });
      expect(listed.structuredContent.images.map((i: Json) => i.url)).toEqual([up.structuredContent.url]);
      expect(listed.structuredContent.nextCursor).toBeNull();
    } finally {
      await client.close();
    }
  });

  test("the newly declared tools answer their models: REST's answer, then what the tool adds", async () => {
    const png = () =>
      Buffer.from(sampleImage("png", { width: 32, height: 20, size: 1024 })).toString("base64");
    const url = "https://example.com/";
    // REST answers first: a route that has run leaves the shared models, and so the schemas, unchanged.
    const before = Object.fromEntries(Object.entries(NAMED_MODELS).map(([n, m]) => [n, modelJson(m)]));
    const rest = {
      templates: await h.call("GET", "/api/v1/templates", { key }),
      layout: await h.call("GET", `/api/v1/sites/${siteId}/layout`, { key }),
      estimate: await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot`, {
        key,
        body: { url, estimateOnly: true },
      }),
      clipEstimate: await h.call("POST", "/api/v1/social/media/clips", {
        key,
        body: { url, motion: "scroll", estimateOnly: true },
      }),
    };
    for (const [name, res] of Object.entries(rest))
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    expect(Object.fromEntries(Object.entries(NAMED_MODELS).map(([n, m]) => [n, modelJson(m)]))).toEqual(
      before,
    );

    const client = await mcpClient(mcp, key);
    try {
      // Listing the tools makes the SDK client check every structuredContent below against its schema.
      const { tools } = await client.listTools();
      for (const t of tools)
        expect({ tool: t.name, schema: t.outputSchema }).toEqual({
          tool: t.name,
          schema: resolved(ref(TOOL_OUTPUTS[t.name]!)),
        });
      const ok = async (name: string, args: Record<string, unknown> = {}) => {
        const res = await callTool(client, name, args);
        expect({ name, error: res.isError ? res.content[0]?.text : undefined }).toEqual({
          name,
          error: undefined,
        });
        return res.structuredContent as Json;
      };

      expect(await ok("list_templates")).toEqual(await rest.templates.json());

      const layout = await ok("get_site_layout", { siteId });
      expect(layout).toEqual({
        ...((await rest.layout.json()) as Json),
        etag: rest.layout.headers.get("etag"),
      });
      const { etag: _etag, ...state } = layout;
      const updated = await ok("update_site_layout", { siteId, styles: state.styles, ifMatch: layout.etag });
      expect(Object.keys(updated).sort()).toEqual([...Object.keys(state), "etag"].sort());
      expect(updated.etag).not.toBe(layout.etag);

      const published = await ok("publish_site", { siteId });
      expect(published.site.public_content_live).toBe(true);
      expect(published.publicPages).toBe(`${mcp.base}/api/v1/public/sites/${published.site.slug}/pages`);
      const unpublished = await ok("unpublish_site", { siteId });
      const site = (await (await h.call("GET", `/api/v1/sites/${siteId}`, { key })).json()) as Json;
      expect(unpublished).toEqual(site);

      expect(await ok("queue_screenshot", { siteId, url, estimateOnly: true })).toEqual(
        await rest.estimate.json(),
      );
      const queued = await ok("queue_screenshot", { siteId, url });
      expect(queued).toMatchObject({ estimate: false, status: "pending", credits: 10 });
      const frame = await ok("upload_media", { siteId, dataBase64: png(), alt: "a frame" });
      await completeRender(h.ctx, queued.renderId, {
        imageKey: frame.path,
        width: 32,
        height: 20,
        warnings: [],
      });
      const done = await ok("get_screenshot", { siteId, renderId: queued.renderId });
      const polled = (await (
        await h.call("GET", `/api/v1/sites/${siteId}/media/screenshot/${queued.renderId}`, { key })
      ).json()) as Json;
      const { embed, ...render } = done;
      expect(Object.keys(render).sort()).toEqual(Object.keys(polled).sort());
      expect(render).toMatchObject({ status: "done", imageUrl: polled.imageUrl, width: 32, height: 20 });
      expect(embed).toContain(`src="${polled.imageUrl}"`);

      expect(await ok("create_clip", { url, motion: "scroll", estimateOnly: true })).toEqual(
        await rest.clipEstimate.json(),
      );
      const clip = await ok("create_clip", { url, motion: "scroll" });
      const pending = await ok("get_clip", { clipId: clip.clipId });
      expect(pending.status).toBe("pending");
      expect(pending).toEqual(
        await (await h.call("GET", `/api/v1/social/media/clips/${clip.clipId}`, { key })).json(),
      );

      await ok("define_collection", {
        siteId,
        key: "team",
        name: "Team",
        fields: [{ key: "name", type: "text", required: true }],
      });
      const written = await ok("upsert_collection_items", {
        siteId,
        collection: "team",
        items: [{ values: { name: "Ada" } }, { values: { name: "Grace" } }],
      });
      expect(written.items.map((i: Json) => i.values.name)).toEqual(["Ada", "Grace"]);
      const reordered = await h.call("PUT", `/api/v1/sites/${siteId}/collections/team/items/order`, {
        key,
        body: { itemIds: written.items.map((i: Json) => i.id).reverse() },
      });
      const restItems = ((await reordered.json()) as Json).items;
      expect(restItems.map((i: Json) => Object.keys(i).sort())).toEqual(
        written.items.map((i: Json) => Object.keys(i).sort()),
      );

      const page = await ok("create_page", { siteId, path: "/gone", title: "Gone", content: "# Gone" });
      expect(await ok("delete_page", { siteId, pageId: page.page.id })).toEqual({
        deleted: true,
        pageId: page.page.id,
      });
      const spare = await ok("upload_media", { siteId, dataBase64: png() });
      const { images } = await ok("list_media", { siteId });
      const mediaId = images.find((i: Json) => i.url === spare.url).id;
      expect(await ok("delete_media", { siteId, mediaId })).toEqual({ deleted: true, mediaId });

      const added = await ok("add_subscriber", { siteId, email: "Ada@Example.com" });
      expect(added).toMatchObject({ created: true, subscriber: { email: "ada@example.com" } });
      expect((await ok("add_subscriber", { siteId, email: "ada@example.com" })).created).toBe(false);
      const draft = await ok("create_campaign", { siteId, subject: "Hi", html: "<p>Hi</p>" });
      expect(
        await ok("send_test_campaign", { siteId, campaignId: draft.campaign.id, to: ["qa@example.com"] }),
      ).toEqual({ accepted: true, to: 1 });
    } finally {
      await client.close();
    }
  });

  test("import_media_from_url refuses a bad URL with REST's error, word for word, in its text", async () => {
    // The client has listed the tools (mcpClient does): an error result reaches it as a result, not as
    // a mismatch with the output schema, because it carries no structuredContent.
    const client = await mcpClient(mcp, key);
    try {
      for (const url of [
        "ftp://example.com/a.png",
        "not a url",
        "https://127.0.0.1/a.png",
        "http://10.0.0.1/a.png",
        `https://example.com/${"a".repeat(2100)}.png`,
      ]) {
        const rest = await h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, { key, body: { url } });
        expect(rest.status).toBeGreaterThanOrEqual(400);
        expect(rest.status).toBeLessThan(500);
        const restError = ((await rest.json()) as Json).error;
        const tool = await callTool(client, "import_media_from_url", { siteId, url });
        expect(tool.isError).toBe(true);
        expect(tool.structuredContent).toBeUndefined();
        expect(tool.content[0]!.text).toStartWith(`${restError.code}: ${restError.message}\n\n`);
        expect({ url, error: tool.error }).toEqual({ url, error: restError });
      }
    } finally {
      await client.close();
    }
  });
});
