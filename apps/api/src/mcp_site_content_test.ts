import { describe, expect, test } from "bun:test";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

// The site-content tools that closed the parity table's gaps (issue 36): one page, the default locale,
// broken links, and collections beyond define/upsert/list, each through /mcp with the SDK's client.

type Json = any;
const bed = mcpTestBed();

describe("site content tools", () => {
  test("get_page reads one page; list_broken_links names a link to a deleted page; set_default_locale changes the fallback", async () => {
    const org = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const site = (await bed.h.newSite(org.key)) as Json;
      const about = await callTool(client, "create_page", {
        siteId: site.id,
        path: "/about",
        title: "About",
        content: "# About us",
      });
      const aboutId = about.structuredContent.page.id;
      const menu = await callTool(client, "create_page", {
        siteId: site.id,
        path: "/menu",
        title: "Menu",
        content: "See [about](/about).",
      });
      const read = await callTool(client, "get_page", { siteId: site.id, pageId: aboutId });
      expect(read.structuredContent.page).toMatchObject({
        id: aboutId,
        path: "/about",
        content: "# About us",
      });

      const clean = await callTool(client, "list_broken_links", { siteId: site.id });
      expect(clean.structuredContent.links).toEqual([]);
      await callTool(client, "delete_page", { siteId: site.id, pageId: aboutId });
      const broken = await callTool(client, "list_broken_links", { siteId: site.id });
      expect(broken.structuredContent.links).toEqual([
        { href: `page:${aboutId}`, where: { type: "page", id: menu.structuredContent.page.id } },
      ]);
      expect(broken.content[0]!.text).toContain("update_page");
      const gone = await callTool(client, "get_page", { siteId: site.id, pageId: aboutId });
      expect(gone.error.code).toBe("NOT_FOUND");

      await callTool(client, "set_chrome_strings", {
        siteId: site.id,
        locale: "de",
        strings: { "nav.home": "Startseite" },
      });
      const set = await callTool(client, "set_default_locale", { siteId: site.id, defaultLocale: "de" });
      expect(set.structuredContent).toMatchObject({ locale: "de", defaultLocale: "de" });
      expect(set.content[0]!.text).toContain("set_chrome_strings");
      const chrome = await callTool(client, "get_chrome_strings", { siteId: site.id });
      expect(chrome.structuredContent.strings["nav.home"]).toBe("Startseite");
      const bad = await callTool(client, "set_default_locale", {
        siteId: site.id,
        defaultLocale: "not a tag",
      });
      expect(bad.error.code).toBe("VALIDATION_ERROR");
      expect(bad.error.details.map((d: Json) => d.field)).toEqual(["defaultLocale"]);
    } finally {
      await client.close();
    }
  });

  test("collections: list_collections, reorder_collection_items, update_collection_item, delete_collection_item, delete_collection", async () => {
    const org = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const siteId = ((await bed.h.newSite(org.key)) as Json).id;
      await callTool(client, "define_collection", {
        siteId,
        key: "team",
        name: "Team",
        fields: [
          { key: "name", type: "text", required: true },
          { key: "age", type: "number" },
        ],
      });
      const written = await callTool(client, "upsert_collection_items", {
        siteId,
        collection: "team",
        items: [{ values: { name: "Ada" } }, { values: { name: "Bo" } }, { values: { name: "Cy" } }],
      });
      const [a, b, c] = written.structuredContent.items.map((i: Json) => i.id as string);
      const listed = await callTool(client, "list_collections", { siteId });
      expect(listed.structuredContent.collections).toMatchObject([
        { key: "team", name: "Team", itemCount: 3 },
      ]);

      const reordered = await callTool(client, "reorder_collection_items", {
        siteId,
        collection: "team",
        itemIds: [c, a, b],
      });
      expect(reordered.structuredContent.items.map((i: Json) => i.values.name)).toEqual(["Cy", "Ada", "Bo"]);
      const partial = await callTool(client, "reorder_collection_items", {
        siteId,
        collection: "team",
        itemIds: [c, a],
      });
      expect(partial.error.code).toBe("VALIDATION_ERROR");
      expect(partial.error.message).toContain(b);

      const updated = await callTool(client, "update_collection_item", {
        siteId,
        collection: "team",
        itemId: a,
        values: { age: 36 },
      });
      expect(updated.structuredContent.item.values).toEqual({ name: "Ada", age: 36 });
      const wrong = await callTool(client, "update_collection_item", {
        siteId,
        collection: "team",
        itemId: a,
        values: { age: "old" },
      });
      expect(wrong.error.details.map((d: Json) => d.field)).toEqual(["values.age"]);

      const deleted = await callTool(client, "delete_collection_item", {
        siteId,
        collection: "team",
        itemId: b,
      });
      expect(deleted.structuredContent).toEqual({ deleted: true, itemId: b });
      const left = await callTool(client, "list_collection_items", { siteId, collection: "team" });
      expect(left.structuredContent.items.map((i: Json) => i.id)).toEqual([c, a]);
      const again = await callTool(client, "delete_collection_item", {
        siteId,
        collection: "team",
        itemId: b,
      });
      expect(again.error.code).toBe("NOT_FOUND");

      const dropped = await callTool(client, "delete_collection", { siteId, collection: "team" });
      expect(dropped.structuredContent).toEqual({ deleted: true, key: "team" });
      expect((await callTool(client, "list_collections", { siteId })).structuredContent.collections).toEqual(
        [],
      );
      const items = await callTool(client, "list_collection_items", { siteId, collection: "team" });
      expect(items.error.code).toBe("NOT_FOUND");
    } finally {
      await client.close();
    }
  });

  test("the new tools keep REST's scopes: a content:read key reads but may not change", async () => {
    const org = await bed.h.seedOrg();
    const siteId = ((await bed.h.newSite(org.key)) as Json).id;
    const reader = await bed.h.seedOrg({ scopes: ["content:read"] });
    const client = await mcpClient(bed.mcp, reader.key);
    const owner = await mcpClient(bed.mcp, org.key);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["get_page", "list_broken_links", "list_collections"]));
      for (const name of ["set_default_locale", "delete_collection", "update_collection_item"]) {
        expect(names).not.toContain(name);
        const r = await callTool(client, name, { siteId });
        expect([name, r.error.code]).toEqual([name, "FORBIDDEN"]);
      }
      // Another organization's site is NOT_FOUND, as over REST.
      const foreign = await callTool(client, "list_collections", { siteId });
      expect(foreign.error.code).toBe("NOT_FOUND");
      expect((await callTool(owner, "list_collections", { siteId })).structuredContent.collections).toEqual(
        [],
      );
    } finally {
      await client.close();
      await owner.close();
    }
  });
});
