import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey, SCOPES, type Scope } from "@site/domain/core";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// auth_test.ts walks the live OpenAPI document for 401 without a key; this file walks it for 403: every
// operation with a declared scope (`x-required-scope`, written by the route's auth macro) is tried with
// a key that has every scope but that one, and every operation that changes something is tried with a
// key that may only read. The second walk is the one that notices a scope lowered in the code (the
// document follows the code, so the first walk alone would follow the mutant): campaign send or
// subscriber delete declared `content:read` would let a read-only key through.

type Json = any;
type Op = { method: string; path: string; op: Json };

let h: TestApp;
const ops: Op[] = [];
/** A key per scope: it carries every scope but that one. */
const lacking = new Map<Scope, string>();
/** A key that carries only the read scope (what a viewer's key may do). */
let readOnly: string;

/**
 * Operations that change nothing although their method is not GET: they answer with what they compute.
 * Each is listed with why; an operation that writes does not belong here.
 */
const READS_BY_POST = new Map<string, string>([
  ["POST /api/v1/sites/{siteId}/links/translate", "says what hrefs name in the site now; stores nothing"],
]);

beforeAll(async () => {
  h = await buildTestApp();
  const doc = (await (await h.call("GET", "/swagger/json")).json()) as Json;
  for (const [path, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json))
      ops.push({ method: method.toUpperCase(), path, op });
  const owner = await h.seedOrg({ scopes: [...SCOPES] });
  const key = (scopes: Scope[]) =>
    createApiKey(h.ctx, { orgId: owner.org.id, userId: owner.user.id, scopes }).then((k) => k.key);
  for (const scope of SCOPES) lacking.set(scope, await key(SCOPES.filter((s) => s !== scope)));
  readOnly = await key(["content:read"]);
});
afterAll(() => h.close());

/** An OpenAPI path with every parameter filled (the scope is checked before any id is looked up). */
const concrete = (path: string) =>
  path
    .replace("{locale}", "en")
    .replace("{key}", "team")
    .replace(/\{\w+\}/g, "00000000-0000-4000-8000-000000000000");

/** Calls an operation with `key` and a body that would fail validation (the scope must answer first). */
async function refusal(o: Op, key: string): Promise<{ status: number; code?: string; message?: string }> {
  const res = await h.call(o.method, concrete(o.path), { key, body: o.op.requestBody ? {} : undefined });
  const body = (await res.json().catch(() => ({}))) as Json;
  return { status: res.status, code: body.error?.code, message: body.error?.message };
}

describe("each operation's scope is enforced (403), read from the live OpenAPI document", () => {
  test("every operation with a declared scope answers 403 FORBIDDEN naming it to a key with every other scope", async () => {
    const scoped = ops.filter((o) => o.op["x-required-scope"] !== undefined);
    expect(scoped.length).toBeGreaterThan(60);
    for (const o of scoped) {
      const scope = o.op["x-required-scope"] as Scope;
      expect(SCOPES, `${o.method} ${o.path} declares a known scope`).toContain(scope);
      const got = await refusal(o, lacking.get(scope)!);
      // 401 would mean the key was not recognised, 200/2xx that the scope is not checked at all.
      expect(got, `${o.method} ${o.path} without ${scope}`).toMatchObject({ status: 403, code: "FORBIDDEN" });
      expect(got.message, `${o.method} ${o.path} names ${scope}`).toContain(scope);
    }
  }, 120_000);

  test("every operation that changes something refuses a key that may only read (403), campaign send and subscriber delete among them", async () => {
    const writes = ops.filter(
      (o) =>
        !["GET", "HEAD"].includes(o.method) &&
        o.op["x-required-scope"] !== undefined &&
        !READS_BY_POST.has(`${o.method} ${o.path}`),
    );
    const names = writes.map((o) => `${o.method} ${o.path}`);
    expect(names).toContain("POST /api/v1/sites/{siteId}/campaigns/{campaignId}/send");
    expect(names).toContain("DELETE /api/v1/sites/{siteId}/subscribers/{subscriberId}");
    for (const o of writes) {
      expect(o.op["x-required-scope"], `${o.method} ${o.path} declares a write scope`).not.toBe(
        "content:read",
      );
      const got = await refusal(o, readOnly);
      expect(got, `${o.method} ${o.path} with a read-only key`).toMatchObject({
        status: 403,
        code: "FORBIDDEN",
      });
    }
  }, 120_000);
});
