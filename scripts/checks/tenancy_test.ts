import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as ts from "typescript";

/**
 * Tenancy is in the types (decision 1541): the domain's site functions take an `OwnedSite`, which only
 * the ownership check (`getOwnSite`) makes for the API, so a route or MCP tool that skips the check does
 * not compile. This file holds the rules that keep it so:
 * - no exported domain function of the form `(ctx, siteId: string, …)`, the shape of a site function,
 *   but the building blocks listed in INTERNAL, which the API may not import;
 * - the API imports no domain function taking a bare `siteId` but the OWNERSHIP_CHECKS, which take the
 *   caller's Principal and check the site themselves;
 * - only owned_site.ts casts to OwnedSite, and the API never calls the system's own constructors.
 * Files are read with the TypeScript parser (no type checking: a few seconds in all). tenancy_types.ts
 * holds the type-level half: bare ids that must not compile, checked by tsc.
 */
const ROOT = resolve(import.meta.dir, "../..");
const DOMAIN = join(ROOT, "libs/domain");
const API = join(ROOT, "apps/api/src");

/**
 * Exported `(ctx, siteId: string, …)` functions that are not site operations an edge asks for: each is
 * called inside the domain with a site it already holds (or a visitor's published site), never by the API.
 */
const INTERNAL: Record<string, string> = {
  grantVisitorUrl: "signs a visitor grant for a file of a site being read",
  grantMemberUrl: "signs a member grant for a file of a site being read",
  filesOfSite: "the library files among keys a page, layout or campaign of a site names",
  reserveImport: "a step of importFromUrl",
  resolveChromeStrings: "chrome strings for getChrome and the public site read",
  getCollection: "a step of the collection functions, inside their transaction",
  scanPageForWrite: "a step of createPage and updatePage",
  checkPageMedia: "a step of createPage and updatePage",
  storableMediaRefs: "a step of layout, collection, link and campaign writes",
  mediaSigner: "a step of layout, collection and link reads",
  storableCampaignHtml: "a step of the campaign writes and media deletion",
  signCampaignForMember: "a step of the campaign reads",
  signCampaignForMail: "a step of campaign sending (the render daemon's sender)",
  loadBrowserSession: "the render daemon's read of a render's stored sign-in",
};

/** Domain functions the API may call with a bare id: each takes the Principal and checks ownership itself. */
const OWNERSHIP_CHECKS = [
  "getOwnSite",
  "listOwnLibrary",
  "renameSite",
  "deleteSite",
  "deleteSiteMedia",
  "queueScreenshot",
  "getRender",
  "createLoginLink",
];

/** The system's own ways to an OwnedSite, which the API (routes, MCP tools, anything it serves) never uses. */
const SYSTEM_CONSTRUCTORS = ["siteOfRecord", "siteById"];

type Fn = { file: string; name: string; params: { name: string; type: string }[]; body: string };

function tsFiles(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith("_test.ts") && keep(path)) out.push(path);
    }
  };
  walk(dir);
  return out;
}

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
}

/** Exported function declarations (and `export const f = (…) =>`) of the domain's areas, test support aside. */
function domainFunctions(): Fn[] {
  const fns: Fn[] = [];
  for (const file of tsFiles(DOMAIN, (p) => !relative(DOMAIN, p).startsWith("testing"))) {
    const src = parse(file);
    const add = (name: string, node: ts.SignatureDeclarationBase & { body?: ts.Node }) =>
      fns.push({
        file: relative(ROOT, file),
        name,
        params: node.parameters.map((p) => ({ name: p.name.getText(src), type: p.type?.getText(src) ?? "" })),
        body: node.body?.getText(src) ?? "",
      });
    for (const st of src.statements) {
      const exported =
        ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported) continue;
      if (ts.isFunctionDeclaration(st) && st.name) add(st.name.text, st);
      if (ts.isVariableStatement(st))
        for (const d of st.declarationList.declarations)
          if (
            ts.isIdentifier(d.name) &&
            d.initializer &&
            (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
          )
            add(d.name.text, d.initializer);
    }
  }
  return fns;
}

const bareSiteId = (f: Fn) => f.params.some((p) => p.name === "siteId" && p.type === "string");
/** The shape of a site function: a context first (the request's or a narrower one), then the site's id. */
const siteFunctionShape = (f: Fn) =>
  f.params[0]?.name === "ctx" &&
  /Context\b/.test(f.params[0].type) &&
  f.params[1]?.name === "siteId" &&
  f.params[1].type === "string";

/** The names each API file imports from @site/domain/<area>. */
function apiDomainImports(): { file: string; names: string[] }[] {
  return tsFiles(API, () => true).map((file) => {
    const src = parse(file);
    const names: string[] = [];
    for (const st of src.statements)
      if (
        ts.isImportDeclaration(st) &&
        ts.isStringLiteral(st.moduleSpecifier) &&
        st.moduleSpecifier.text.startsWith("@site/domain/") &&
        st.importClause?.namedBindings &&
        ts.isNamedImports(st.importClause.namedBindings)
      )
        for (const el of st.importClause.namedBindings.elements)
          names.push((el.propertyName ?? el.name).text);
    return { file: relative(ROOT, file), names };
  });
}

describe("tenancy in the types", () => {
  const fns = domainFunctions();
  const byName = new Map<string, Fn[]>();
  for (const f of fns) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);

  test("the scans find what they look for (a parser that found nothing would pass anything)", () => {
    expect(fns.length).toBeGreaterThan(300);
    expect(byName.get("listPages")?.[0]?.params.map((p) => p.type)).toEqual(["Context", "OwnedSite"]);
    expect(fns.filter(siteFunctionShape).length).toBeGreaterThan(10);
    const imports = apiDomainImports();
    expect(imports.find((i) => i.file.endsWith("routes/pages.ts"))?.names).toContain("listPages");
    expect(imports.find((i) => i.file.endsWith("mcp_tools/site_building.ts"))?.names).toContain("getLayout");
  });

  test("no domain site function takes a bare siteId: they take the OwnedSite the ownership check made", () => {
    const bare = fns
      .filter((f) => siteFunctionShape(f) && !(f.name in INTERNAL) && !SYSTEM_CONSTRUCTORS.includes(f.name))
      .map((f) => `${f.file}: ${f.name}`);
    expect(bare).toEqual([]);
    // A name that left the domain leaves the list too.
    expect(
      Object.keys(INTERNAL).filter((n) => !fns.some((f) => f.name === n && siteFunctionShape(f))),
    ).toEqual([]);
  });

  test("the API calls no domain function with a bare siteId but those that check ownership themselves", () => {
    const found: string[] = [];
    for (const { file, names } of apiDomainImports())
      for (const name of names)
        if ((byName.get(name) ?? []).some(bareSiteId) && !OWNERSHIP_CHECKS.includes(name))
          found.push(`${file}: ${name}`);
    expect(found).toEqual([]);
  });

  test("each ownership check takes the caller's Principal and checks the site's organization", () => {
    for (const name of OWNERSHIP_CHECKS) {
      const [f] = byName.get(name) ?? [];
      expect(f, name).toBeDefined();
      expect(
        f!.params.some((p) => p.type === "Principal"),
        name,
      ).toBe(true);
      expect(/getOwnSite\(|principal\.orgId/.test(f!.body), name).toBe(true);
    }
  });

  test("only owned_site.ts casts to OwnedSite; the API never uses the system's constructors", () => {
    const casts = tsFiles(join(ROOT, "libs"), () => true)
      .concat(
        tsFiles(join(ROOT, "apps"), () => true),
        tsFiles(join(ROOT, "scripts"), () => true),
      )
      .filter((f) => /\bas\s+(?:[\w&\s]*&\s*)?OwnedSite\b/.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(casts).toEqual(["libs/domain/core/owned_site.ts"]);
    const used = apiDomainImports().flatMap(({ file, names }) =>
      names.filter((n) => SYSTEM_CONSTRUCTORS.includes(n)).map((n) => `${file}: ${n}`),
    );
    expect(used).toEqual([]);
  });
});
