import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

/** Every newsletter route: method, OpenAPI path, whether it takes a body, its success content type. */
const ROUTES: [string, string, boolean, string][] = [
  ["get", "/api/v1/sites/{siteId}/subscribers", false, "application/json"],
  ["post", "/api/v1/sites/{siteId}/subscribers", true, "application/json"],
  ["get", "/api/v1/sites/{siteId}/subscribers/{subscriberId}", false, "application/json"],
  ["post", "/api/v1/sites/{siteId}/subscribers/{subscriberId}/reactivate", false, "application/json"],
  ["delete", "/api/v1/sites/{siteId}/subscribers/{subscriberId}", false, ""],
  ["get", "/api/v1/sites/{siteId}/campaigns", false, "application/json"],
  ["post", "/api/v1/sites/{siteId}/campaigns", true, "application/json"],
  ["get", "/api/v1/sites/{siteId}/campaigns/{campaignId}", false, "application/json"],
  ["patch", "/api/v1/sites/{siteId}/campaigns/{campaignId}", true, "application/json"],
  ["delete", "/api/v1/sites/{siteId}/campaigns/{campaignId}", false, ""],
  ["get", "/api/v1/sites/{siteId}/campaigns/{campaignId}/preview", false, "text/html"],
  ["post", "/api/v1/sites/{siteId}/campaigns/{campaignId}/test", true, "application/json"],
  ["post", "/api/v1/sites/{siteId}/campaigns/{campaignId}/send", true, "application/json"],
  ["post", "/api/v1/sites/{siteId}/campaigns/{campaignId}/cancel", false, "application/json"],
  ["post", "/api/v1/sites/{siteId}/campaigns/{campaignId}/resume", false, "application/json"],
  ["post", "/api/v1/sites/{siteId}/campaigns/{campaignId}/revoke-media", false, "application/json"],
  ["post", "/api/v1/public/sites/{slug}/subscribe", true, "application/json"],
  ["get", "/api/v1/public/newsletter/confirm", false, "text/html"],
  ["get", "/api/v1/public/newsletter/unsubscribe", false, "text/html"],
  ["post", "/api/v1/public/newsletter/unsubscribe", false, "application/json"],
];

describe("OpenAPI: the newsletter routes", () => {
  test("every route is documented with a typed body, a typed success answer and its errors", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as Json;
    for (const [method, path, hasBody, type] of ROUTES) {
      const name = `${method} ${path}`;
      const op = doc.paths[path]?.[method];
      expect(op, name).toBeDefined();
      expect(op.summary, `${name} summary`).toBeString();
      expect(op.tags, `${name} tags`).toBeArray();
      if (hasBody) {
        const body = op.requestBody?.content?.["application/json"]?.schema;
        expect(body?.type, `${name} body`).toBe("object");
        expect(Object.keys(body.properties ?? {}).length, `${name} body fields`).toBeGreaterThan(0);
      }
      const success = Object.entries(op.responses).find(([s]) => s.startsWith("2")) as [string, Json];
      expect(success, `${name} success`).toBeDefined();
      if (type) {
        const given = success[1].content?.[type]?.schema;
        // A named model's answer is a $ref to its component.
        const named = (s: Json) => (s?.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
        const schema = named(given);
        expect(schema, `${name} answers ${type}`).toBeDefined();
        // An answer of one of two shapes (one subscriber, or an import's counts) lists each.
        const shapes: Json[] = (schema.anyOf ?? [schema]).map(named);
        if (type === "application/json")
          for (const shape of shapes)
            expect(Object.keys(shape.properties ?? {}).length, `${name} answer fields`).toBeGreaterThan(0);
      }
      const errors = Object.keys(op.responses).filter((s) => !s.startsWith("2"));
      expect(errors.length, `${name} declares its errors`).toBeGreaterThan(0);
      for (const s of errors) expect(op.responses[s]["x-error-codes"], `${name} ${s} codes`).toBeArray();
      if (!path.startsWith("/api/v1/public/")) {
        expect(errors, name).toEqual(expect.arrayContaining(["401", "403", "404"]));
        expect(op.security, name).toEqual([{ bearerAuth: [] }]);
      } else expect(errors, name).toContain("400");
    }
    const post = doc.paths["/api/v1/sites/{siteId}/subscribers"].post;
    expect(Object.keys(post.requestBody.content["application/json"].schema.properties).sort()).toEqual([
      "confirm",
      "csv",
      "email",
      "name",
      "source",
      "status",
      "subscribers",
    ]);
    expect(doc.paths["/api/v1/public/sites/{slug}/subscribe"].post.responses["429"]).toBeDefined();
    const campaign =
      doc.paths["/api/v1/sites/{siteId}/campaigns/{campaignId}"].get.responses["200"].content[
        "application/json"
      ].schema;
    expect(campaign).toEqual({ $ref: "#/components/schemas/CampaignAnswer" });
    expect(JSON.stringify(doc.components.schemas.CampaignAnswer)).toContain("bounced");
  });
});
