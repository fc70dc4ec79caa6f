import { describe, expect, test } from "bun:test";
import type { AppError } from "@site/domain/core";
import { checkSlug, RESERVED_SLUGS } from "./slugs.ts";

function codeOf(slug: string): string | null {
  try {
    checkSlug(slug);
    return null;
  } catch (err) {
    return (err as AppError).code;
  }
}

describe("site slugs are DNS labels", () => {
  test.each(["a", "acme", "acme-2026", "0day", "a".repeat(63), "x-y-z"])("%p is accepted", (slug) => {
    expect(codeOf(slug)).toBeNull();
  });
  test.each([
    "Acme",
    "acme_site",
    "-acme",
    "acme-",
    "a".repeat(64),
    "ac me",
    "acme.com",
    "ácme",
    "",
    "acme/",
    "ACME",
  ])("%p is INVALID_SLUG", (slug) => {
    expect(codeOf(slug)).toBe("INVALID_SLUG");
  });
  test.each([
    "www",
    "api",
    "app",
    "admin",
    "mail",
    "static",
    "cdn",
    "assets",
    "dashboard",
    "status",
    "docs",
    "help",
    "support",
    "blog",
  ])("%p is RESERVED_SLUG", (slug) => {
    expect(RESERVED_SLUGS.has(slug)).toBe(true);
    expect(codeOf(slug)).toBe("RESERVED_SLUG");
  });
});
