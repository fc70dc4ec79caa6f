import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

/** Every route of the site-building areas: method, OpenAPI path, whether it takes a body. */
const ROUTES: [string, string, boolean][] = [
  ["get", "/api/v1/sites/{siteId}/layout", false],
  ["put", "/api/v1/sites/{siteId}/layout", true],
  ["get", "/api/v1/sites/{siteId}/chrome", false],
  ["put", "/api/v1/sites/{siteId}/chrome/{locale}", true],
  ["patch", "/api/v1/sites/{siteId}/chrome", true],
  ["get", "/api/v1/sites/{siteId}/collections", false],
  ["put", "/api/v1/sites/{siteId}/collections/{key}", true],
  ["delete", "/api/v1/sites/{siteId}/collections/{key}", false],
  ["get", "/api/v1/sites/{siteId}/collections/{key}/items", false],
  ["post", "/api/v1/sites/{siteId}/collections/{key}/items", true],
  ["patch", "/api/v1/sites/{siteId}/collections/{key}/items/{itemId}", true],
  ["delete", "/api/v1/sites/{siteId}/collections/{key}/items/{itemId}", false],
  ["put", "/api/v1/sites/{siteId}/collections/{key}/items/order", true],
  ["put", "/api/v1/sites/{siteId}/pages/order", true],
  ["post", "/api/v1/sites/{siteId}/links/translate", true],
  ["get", "/api/v1/sites/{siteId}/links/broken", false],
  ["get", "/api/v1/public/sites/{slug}", false],
  ["get", "/api/v1/public/sites/{slug}/collections/{key}/items", false],
];

const schemaOf = (content: Json) => content?.["application/json"]?.schema;

describe("OpenAPI: the site-building routes", () => {
  test("every route is documented with a typed body, a typed success answer and its errors", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as Json;
    for (const [method, path, hasBody] of ROUTES) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.summary, `${method} ${path} summary`).toBeString();
      if (hasBody) {
        const body = schemaOf(op.requestBody?.content);
        expect(body?.type, `${method} ${path} body`).toBe("object");
        expect(Object.keys(body.properties ?? {}).length, `${method} ${path} body fields`).toBeGreaterThan(0);
        expect(Object.keys(op.responses), `${method} ${path} 400`).toContain("400");
      }
      const success = Object.entries(op.responses).find(([s]) => s.startsWith("2"))!;
      expect(success, `${method} ${path} success`).toBeDefined();
      const [status, answer] = success as [string, Json];
      if (status !== "204") {
        // A named model's answer is a $ref to its component.
        const given = schemaOf(answer.content);
        const schema = given?.$ref ? doc.components.schemas[given.$ref.split("/").pop()] : given;
        expect(
          Object.keys(schema?.properties ?? {}).length,
          `${method} ${path} answer fields`,
        ).toBeGreaterThan(0);
      }
      expect(Object.keys(op.responses), `${method} ${path} 404`).toContain("404");
      if (!path.startsWith("/api/v1/public/")) {
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["401", "403"]));
      }
    }
    const put = doc.paths["/api/v1/sites/{siteId}/layout"].put;
    expect(Object.keys(put.responses)).toContain("412");
    expect(put.parameters.map((p: Json) => p.name)).toContain("If-Match");
    const nav = schemaOf(put.requestBody.content).properties.layout.properties.header.properties.navigation;
    expect(nav.maxItems).toBe(100);
  });
});
