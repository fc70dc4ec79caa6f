import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  envExampleText,
  loadConfig,
  readmeWithTables,
  SETTINGS,
  SOCIAL_PLATFORMS,
  settingDecl,
} from "@site/config";

/**
 * One declaration for each setting (issue 37, decision 1520): libs/config/src/settings.ts declares every
 * setting; the parser reads the environment only through it, and `.env.example` and the README's
 * settings tables are written from it (`bun scripts/settings_docs.ts`). These tests fail when the parser
 * reads a setting the table does not declare, when the table declares one the parser never reads, and
 * when either document differs from what the table says.
 */
const ROOT = resolve(import.meta.dir, "../..");

/** The names loadConfig reads, recorded through an environment that answers every read. */
function namesTheParserReads(): Set<string> {
  const read = new Set<string>();
  // S3_BUCKET and the client ids open the settings read only beside them (the S3 keys, the secrets).
  const given: Record<string, string> = { SECRET_KEY: "0123456789abcdef0123", S3_BUCKET: "b" };
  for (const p of SOCIAL_PLATFORMS) given[`SOCIAL_${p.toUpperCase()}_CLIENT_ID`] = "id";
  const env = new Proxy(given, {
    get(target, name) {
      if (typeof name === "string") read.add(name);
      return target[name as string];
    },
  });
  loadConfig(env);
  return read;
}

describe("the settings table is the one declaration of every setting", () => {
  test("the parser reads every declared setting, and nothing else", () => {
    const read = namesTheParserReads();
    expect(read.size).toBeGreaterThan(100);
    expect(SETTINGS.map((s) => s.name).filter((n) => !read.has(n))).toEqual([]);
    expect([...read].filter((n) => !SETTINGS.some((s) => s.name === n))).toEqual([]);
  });

  test("a read of an undeclared name fails at once, naming where to declare it", () => {
    expect(() => settingDecl("NOT_A_SETTING")).toThrow(/declare it in libs\/config\/src\/settings.ts/);
  });

  test("each declaration is whole: unique name, doc, apps, a default within its bounds", () => {
    expect(new Set(SETTINGS.map((s) => s.name)).size).toBe(SETTINGS.length);
    for (const s of SETTINGS) {
      expect(s.name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(s.doc.length).toBeGreaterThan(5);
      expect(s.apps.length).toBeGreaterThan(0);
      if (s.kind === "int" && typeof s.default === "number")
        expect(s.default).toBeGreaterThanOrEqual(s.min ?? 0);
      if (s.kind === "url") expect(s.protocols?.length).toBeGreaterThan(0);
    }
    // The declared defaults are the parser's: an unset environment reads them back.
    const c = loadConfig({ SECRET_KEY: "0123456789abcdef0123" });
    expect(c.port).toBe(settingDecl("PORT").default as number);
    expect(c.webhooks.timeoutMs).toBe(settingDecl("WEBHOOK_TIMEOUT_MS").default as number);
    expect(c.newsletter.snsCertHosts.join(",")).toBe(
      settingDecl("NEWSLETTER_SNS_CERT_HOSTS").default as string,
    );
  });

  test("test hooks and development switches are marked, and only they", () => {
    expect(SETTINGS.filter((s) => s.notInProduction).map((s) => [s.name, s.notInProduction!.kind])).toEqual([
      ["ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT", "development"],
      ["FETCH_ALLOW_HOSTS", "test hook"],
    ]);
  });

  test(".env.example is the one the table writes (bun scripts/settings_docs.ts)", () => {
    const example = readFileSync(join(ROOT, ".env.example"), "utf8");
    expect(example).toBe(envExampleText());
    for (const s of SETTINGS) expect(example).toMatch(new RegExp(`^# ${s.name}=`, "m"));
    // A secret shows at most its declared placeholder, never a default.
    for (const s of SETTINGS.filter((x) => x.secret))
      expect(example).toContain(`\n# ${s.name}=${s.example ?? ""}\n`);
  });

  test("the README's settings tables are the ones the table writes (bun scripts/settings_docs.ts)", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toBe(readmeWithTables(readme));
    for (const s of SETTINGS) expect(readme).toContain(`| \`${s.family ?? s.name}\` |`);
  });
});
