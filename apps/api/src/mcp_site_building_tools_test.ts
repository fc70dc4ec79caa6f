import { describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

const bed = mcpTestBed();

async function newSite(key: string) {
  const res = await bed.h.call("POST", "/api/v1/sites", {
    key,
    body: { name: "Agent site", slug: `ag-${uniq()}` },
  });
  return ((await res.json()) as Json).site.id as string;
}

describe("MCP tools for building a site", () => {
  test("an agent sets layout (with its etag), chrome strings, a collection, page order and checks links", async () => {
    const org = await bed.h.seedOrg();
    const siteId = await newSite(org.key);
    const logo = await addLibraryFile(bed.h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    await bed.h.call("POST", `/api/v1/sites/${siteId}/pages`, {
      key: org.key,
      body: { path: "/menu", title: "Menu", content: "# Menu" },
    });
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const read = await callTool(client, "get_site_layout", { siteId });
      expect(read.isError).toBeFalsy();
      const etag = read.structuredContent.etag;
      expect(etag).toMatch(/^"layout-\d+"$/);
      const layout = {
        logo: logo.url,
        header: { navigation: [{ label: "Menu", href: "/menu" }] },
        footer: { text: "Since 1920", links: [] },
      };
      const updated = await callTool(client, "update_site_layout", { siteId, layout, ifMatch: etag });
      expect(updated.isError).toBeFalsy();
      expect(updated.structuredContent.layout.logo).toStartWith(`${logo.url}?k=m.`);
      const stale = await callTool(client, "update_site_layout", { siteId, layout, ifMatch: etag });
      expect(stale.isError).toBe(true);
      expect(stale.error.code).toBe("PRECONDITION_FAILED");

      const strings = await callTool(client, "set_chrome_strings", {
        siteId,
        locale: "de",
        strings: { "nav.home": "Startseite" },
      });
      expect(strings.structuredContent.strings["nav.home"]).toBe("Startseite");
      const html = await callTool(client, "set_chrome_strings", {
        siteId,
        locale: "de",
        strings: { "nav.home": "<b>x</b>" },
      });
      expect(html.error).toMatchObject({ code: "VALIDATION_ERROR" });
      expect(html.error.details[0].key).toBe("nav.home");

      const defined = await callTool(client, "define_collection", {
        siteId,
        key: "dishes",
        name: "Dishes",
        fields: [
          { key: "name", type: "text", required: true },
          { key: "price", type: "number" },
        ],
      });
      expect(defined.structuredContent.collection).toMatchObject({ key: "dishes", itemCount: 0 });
      const refused = await callTool(client, "upsert_collection_items", {
        siteId,
        collection: "dishes",
        items: [{ values: { name: "Soup", price: 4 } }, { values: { name: "Bread", price: "cheap" } }],
      });
      expect(refused.error.details.map((d: Json) => d.field)).toEqual(["items.1.values.price"]);
      const written = await callTool(client, "upsert_collection_items", {
        siteId,
        collection: "dishes",
        items: [{ values: { name: "Soup", price: 4 } }, { values: { name: "Bread", price: 2 } }],
      });
      expect(written.structuredContent.items.map((i: Json) => i.position)).toEqual([0, 1]);
      const patched = await callTool(client, "upsert_collection_items", {
        siteId,
        collection: "dishes",
        items: [{ id: written.structuredContent.items[1].id, values: { price: 3 } }],
      });
      expect(patched.structuredContent.items[0].values).toEqual({ name: "Bread", price: 3 });
      const listed = await callTool(client, "list_collection_items", { siteId, collection: "dishes" });
      expect(listed.structuredContent.items).toHaveLength(2);

      const pages = (await (
        await bed.h.call("GET", `/api/v1/sites/${siteId}/pages`, { key: org.key })
      ).json()) as Json;
      const ids = pages.pages.map((p: Json) => p.id).reverse();
      const reordered = await callTool(client, "reorder_pages", { siteId, pageIds: ids });
      expect(reordered.structuredContent.pages.map((p: Json) => p.path)).toEqual(["/menu", "/"]);
      const incomplete = await callTool(client, "reorder_pages", { siteId, pageIds: ids.slice(1) });
      expect(incomplete.error.code).toBe("VALIDATION_ERROR");

      const links = await callTool(client, "translate_links", { siteId, hrefs: ["/menu", "/nope", "#top"] });
      expect(links.structuredContent.links.map((l: Json) => l.kind)).toEqual(["page", "broken", "anchor"]);
    } finally {
      await client.close();
    }
  });

  test("the tools keep the REST scopes and another organization's site is NOT_FOUND", async () => {
    const org = await bed.h.seedOrg();
    const siteId = await newSite(org.key);
    const reader = await bed.h.seedOrg({ scopes: ["content:read"] });
    const stranger = await bed.h.seedOrg();
    const readOnly = await mcpClient(bed.mcp, reader.key);
    const other = await mcpClient(bed.mcp, stranger.key);
    try {
      const denied = await callTool(readOnly, "update_site_layout", {
        siteId,
        styles: { colors: {}, fonts: { heading: "Inter", body: "Inter" } },
      });
      expect(denied.error.code).toBe("FORBIDDEN");
      for (const name of [
        "set_chrome_strings",
        "define_collection",
        "upsert_collection_items",
        "reorder_pages",
      ]) {
        const r = await callTool(readOnly, name, { siteId });
        expect([name, r.error.code]).toEqual([name, "FORBIDDEN"]);
      }
      const foreign = await callTool(other, "get_site_layout", { siteId });
      expect(foreign.error.code).toBe("NOT_FOUND");
      const foreignWrite = await callTool(other, "reorder_pages", { siteId, pageIds: [] });
      expect(foreignWrite.error.code).toBe("NOT_FOUND");
    } finally {
      await readOnly.close();
      await other.close();
    }
  });
});
