import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sampleImage } from "@site/domain/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { modelJson, NAMED_SCHEMAS } from "./openapi_document.ts";

// Each shape declared once, with a name (issue 28 item 2; decision 0050): the domain's models are
// OpenAPI components, REST operations point at them, and MCP tools declare them as output schemas.

type Json = any;
let h: TestApp;
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
  "CollectionItemPage",
  "SocialPostPage",
  "SocialMediaPage",
  "SubscriberPage",
  "CampaignPage",
  "SiteAnswer",
  "SocialPostAnswer",
  "CampaignAnswer",
  "PageList",
  "Chrome",
  "CollectionAnswer",
  "TranslatedLinks",
  "StyleList",
  "PageWrite",
  "LoginLink",
  "ErrorDetails",
  "FieldProblem",
];

/** The MCP tools that answer a named model, and which. */
const TOOL_OUTPUTS: Record<string, string> = {
  list_media: "MediaLibraryPage",
  import_media_from_url: "AddedMediaFile",
  upload_media: "AddedMediaFile",
  list_sites: "SitePage",
  list_collection_items: "CollectionItemPage",
  list_social_posts: "SocialPostPage",
  list_social_media: "SocialMediaPage",
  list_subscribers: "SubscriberPage",
  list_campaigns: "CampaignPage",
  create_site: "SiteAnswer",
  create_social_post: "SocialPostAnswer",
  create_campaign: "CampaignAnswer",
  send_campaign: "CampaignAnswer",
  list_pages: "PageList",
  reorder_pages: "PageList",
  get_chrome_strings: "Chrome",
  set_chrome_strings: "Chrome",
  define_collection: "CollectionAnswer",
  translate_links: "TranslatedLinks",
  list_screenshot_styles: "StyleList",
  create_page: "PageWrite",
  update_page: "PageWrite",
  create_screenshot_login_link: "LoginLink",
};

/**
 * The tools that declare no output schema yet, and why: their answer is not one REST model (it adds
 * fields to REST's answer, or REST answers no body). A new tool either names its model or joins here.
 */
const WITHOUT_OUTPUT = [
  "list_templates", // REST's template list is an inline schema, not yet a domain model
  "publish_site", // adds publicPages to the site
  "unpublish_site",
  "queue_screenshot", // adds the webhooks that will be told
  "get_screenshot", // adds embed and nextStep
  "get_site_layout", // adds the etag REST sends as a header
  "update_site_layout",
  "upsert_collection_items", // many items; REST writes one
  "create_clip", // adds the webhooks that will be told
  "get_clip",
  "delete_media", // REST answers 204
  "delete_page",
  "add_subscriber", // adds created
  "send_test_campaign", // REST answers 202 with no model
];

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
  mcp.serve(h);
  doc = await (await h.call("GET", "/swagger/json")).json();
  ({ key } = await h.seedOrg({ siteLimit: 10 }));
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
    for (const [name, model] of Object.entries(NAMED_SCHEMAS))
      expect(resolved(doc.components.schemas[name])).toEqual(modelJson(model));
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
    // No operation carries an inline copy of a named model.
    const text = JSON.stringify(doc.paths);
    for (const [name, model] of Object.entries(NAMED_SCHEMAS))
      expect({ name, inline: text.includes(JSON.stringify(modelJson(model))) }).toEqual({
        name,
        inline: false,
      });
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
      expect(
        tools
          .filter((t) => !t.outputSchema)
          .map((t) => t.name)
          .sort(),
      ).toEqual([...WITHOUT_OUTPUT].sort());
      for (const [tool, model] of Object.entries(TOOL_OUTPUTS)) {
        const listed = tools.find((t) => t.name === tool);
        expect(listed?.outputSchema).toEqual(resolved(ref(model)));
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

  test("import_media_from_url refuses a bad URL with REST's error, word for word", async () => {
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
        expect({ url, error: tool.structuredContent.error }).toEqual({ url, error: restError });
      }
    } finally {
      await client.close();
    }
  });
});
