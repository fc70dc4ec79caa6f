import { describe, expect, test } from "bun:test";
import { rulesFor } from "./cookie_banners.ts";

const names = (r: ReturnType<typeof rulesFor>) => r.r.map((rule) => rule[1]);

describe("autoconsent rules sent to a document", () => {
  test("a page no site-specific rule names gets the generic rules only", () => {
    const generic = rulesFor("https://example.org/pricing");
    expect(generic.r.length).toBeGreaterThan(100);
    expect(generic.r.every((rule) => rule[3] === "")).toBe(true);
    // the consent manager of the test fixture (settle_pages /consent) is a generic rule
    expect(names(generic).some((n) => /cookie.?notice|gdpr/i.test(n))).toBe(true);
    expect(names(generic)).not.toContain("zinio");
  });

  test("a page a site-specific rule names gets that rule with the generic ones", () => {
    const zinio = rulesFor("https://www.zinio.com/magazines");
    expect(names(zinio)).toContain("zinio");
    expect(zinio.r.length).toBe(rulesFor("https://example.org/").r.length + 1);
    // every string a rule points at is still there
    const s = zinio.s;
    const zinioRule = zinio.r.find((rule) => rule[1] === "zinio");
    const refs = JSON.stringify(zinioRule?.slice(5)).match(/"(?:e|v|c|k|w|wv|h|cc)":(\d+)/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(typeof s[Number(ref.split(":")[1])]).toBe("string");
  });
});
