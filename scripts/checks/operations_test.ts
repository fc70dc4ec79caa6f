import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentedRoutes, undeclaredRoutes } from "@site/api";
import { buildTestApp, type TestApp } from "@site/api/testing";
import { files, OPERATION_IDS, renameOperationIds } from "../codemods/operation_ids.ts";

// One declaration for each operation (issue 37, decision 1530): every route of the document declares
// its operation id (a verb, as Stripe's and Svix's are) and how it is called, once, in its options.
// Seen failing: with `operation: "listBrokenLinks"` removed from routes/links.ts, the first test named
// `GET /api/v1/sites/:siteId/links/broken declares no operation id`; with its `scope:` removed (the
// route then took no key at all), `… declares no access`. A route an MCP tool mirrors fails earlier:
// createApp refuses a tool whose operation no route declares.

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

describe("every route declares its operation", () => {
  test("an operation id and its access (scope, anyKey, ownBearer, operatorToken or public), once each", () => {
    expect(documentedRoutes(h.app).length).toBeGreaterThan(90);
    expect(undeclaredRoutes(h.app)).toEqual([]);
  });

  test("ids are verbs in lowerCamelCase, never the old path-derived ones", () => {
    const old = new Set(Object.keys(OPERATION_IDS).filter((id) => OPERATION_IDS[id] !== id));
    for (const { id, method, path } of documentedRoutes(h.app)) {
      expect({ method, path, id: /^[a-z]+(?:[A-Z][a-z0-9]*)+$|^[a-z]+$/.test(id ?? "") }).toEqual({
        method,
        path,
        id: true,
      });
      expect({ method, path, old: old.has(id ?? "") }).toEqual({ method, path, old: false });
    }
  });

  test("no file names an old operation id (after a merge: bun scripts/codemods/operation_ids.ts)", async () => {
    const root = new URL("../..", import.meta.url).pathname;
    const stale: string[] = [];
    for (const path of await files(root)) {
      const text = await Bun.file(`${root}/${path}`).text();
      if (renameOperationIds(text) !== text) stale.push(path);
    }
    expect(stale).toEqual([]);
  });
});
