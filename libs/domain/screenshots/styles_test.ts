import { describe, expect, test } from "bun:test";
import { STYLE_LIMIT } from "./models.ts";
import { DEFAULT_STYLE_ID, findStyle, listStyles, resolveStyle } from "./styles.ts";

describe("screenshot style catalog", () => {
  test("ships at least 10 styles, 4 featured, covering every device", () => {
    const all = listStyles({ limit: STYLE_LIMIT.max });
    expect(all.length).toBeGreaterThanOrEqual(10);
    expect(all.filter((s) => s.featured).length).toBeGreaterThanOrEqual(4);
    expect(new Set(all.map((s) => s.look.device))).toEqual(
      new Set(["laptop", "monitor", "tablet", "phone", "window"]),
    );
    for (const s of all) expect(s.id).toMatch(/^[a-z0-9-]+$/);
  });

  test("findStyle answers null for an unknown id; only an omitted id means the default look", () => {
    expect(findStyle("laptop-studio")?.name).toBe("Studio Laptop");
    expect(findStyle("unknown")).toBeNull();
    expect(resolveStyle("unknown")).toBeNull();
    expect(resolveStyle(undefined)?.id).toBe(DEFAULT_STYLE_ID);
    expect(resolveStyle(null)?.id).toBe(DEFAULT_STYLE_ID);
  });

  test("featured narrows and limit caps", () => {
    expect(listStyles({ featured: true }).every((s) => s.featured)).toBe(true);
    expect(listStyles({ limit: 2 })).toHaveLength(2);
  });
});
