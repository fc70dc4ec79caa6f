import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// The live OpenAPI document passes `redocly lint` with the recommended ruleset: 0 errors (issue 29
// item 2: the old document had 48 stray `error` keywords, 3 `nullable`, 15+ public operations without
// `security: []`). Redocly runs offline: telemetry and update checks off, the ruleset built in.

type Json = any;
let h: TestApp;
let dir: string;
let doc: Json;
const CLI = resolve(import.meta.dir, "../../../node_modules/@redocly/cli/bin/cli.js");

beforeAll(async () => {
  h = await buildTestApp();
  dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  const res = await h.call("GET", "/swagger/json");
  expect(res.status).toBe(200);
  doc = await res.json();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await h.close();
});

/** Runs `redocly lint` on `document` (recommended rules, offline) and returns its problems. */
async function lint(
  document: Json,
): Promise<{ ruleId: string; severity: string; message: string; pointer: string }[]> {
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(document));
  writeFileSync(join(dir, "redocly.yaml"), "extends:\n  - recommended\ntelemetry: off\n");
  const proc = Bun.spawn(
    [process.execPath, CLI, "lint", file, "--format=json", "--config", join(dir, "redocly.yaml")],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        REDOCLY_TELEMETRY: "off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
        REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [out, err] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text()];
  await proc.exited;
  const report = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1)) as Json;
  expect(report.problems, err).toBeArray();
  return report.problems.map((p: Json) => ({
    ruleId: p.ruleId,
    severity: p.severity,
    message: p.message,
    pointer: p.location?.[0]?.pointer,
  }));
}

describe("OpenAPI document under redocly lint (recommended)", () => {
  test("0 errors", async () => {
    const problems = await lint(doc);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
  }, 60_000);

  test("the linter is live: the issue's defects put back are errors again", async () => {
    const broken = structuredClone(doc);
    broken.paths["/healthz"].get.security = undefined;
    delete broken.paths["/healthz"].get.security;
    broken.components.schemas.Site.properties.name.error = "a custom message";
    broken.components.schemas.Site.properties.name.nullable = true;
    const rules = (await lint(broken)).filter((p) => p.severity === "error").map((p) => p.ruleId);
    expect(rules).toContain("security-defined");
    expect(rules.filter((r) => r === "struct").length).toBe(2);
  }, 60_000);

  test("public operations say `security: []`; named Site, MediaImage and a typed error `details`", () => {
    expect(doc.paths["/api/v1/public/sites/{slug}/pages"].get.security).toEqual([]);
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths["/api/v1/newsletter/inbound"].post.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths["/api/v1/sites"].post.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(doc.components.schemas.Site.properties).sort()).toEqual([
      "id",
      "name",
      "public_content_live",
      "slug",
      "updated_at",
    ]);
    const one = doc.paths["/api/v1/sites/{siteId}"].get.responses;
    expect(one["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/SiteAnswer",
    });
    expect(doc.components.schemas.SiteAnswer.properties.site).toEqual({ $ref: "#/components/schemas/Site" });
    expect(one["404"].content["application/json"].schema.properties.error.properties.details).toEqual({
      $ref: "#/components/schemas/ErrorDetails",
    });
    expect(doc.components.schemas.ErrorDetails.anyOf[0].items).toEqual({
      $ref: "#/components/schemas/FieldProblem",
    });
    expect(doc.components.schemas.MediaImage.properties.id.format).toBe("uuid");
    // The one naming exception is documented where clients read.
    expect(doc.info.description).toContain("snake_case");
    expect(doc.info.description).toContain("public_content_live");
  });
});
