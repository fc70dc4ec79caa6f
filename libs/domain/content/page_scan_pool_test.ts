import { describe, expect, test } from "bun:test";
import { PAGE_SCAN_DEMOTE_CPU_MS, pageScanThreads, scanPage } from "./page_scan_pool.ts";

// Decision 0612: a parse past PAGE_SCAN_DEMOTE_CPU_MS of CPU has its worker thread lowered to nice 19,
// and that worker is replaced by a fresh one after the parse (its priority cannot be raised again).

const bases = { publicBaseUrl: "https://api.example.test", legacyPrefixes: [] };
const uniq = () => Math.random().toString(36).slice(2, 9);

async function until<T>(what: () => T | undefined, ms = 10_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const found = what();
    if (found !== undefined) return found;
    if (performance.now() > end) throw new Error("timed out");
    await Bun.sleep(10);
  }
}
const ready = () =>
  until(() => (pageScanThreads().every((t) => t.tid !== null && t.nice !== null) ? true : undefined));

describe.if(process.platform === "linux")("parser thread priority", () => {
  test("a quick parse keeps its worker at its usual nice and the same thread", async () => {
    await scanPage(`Warm ${uniq()}.`, bases);
    await ready();
    const before = pageScanThreads();
    expect(before.every((t) => t.nice === before[0]!.nice && t.nice! < 19)).toBe(true);
    expect((await scanPage(`One line ${uniq()}.`, bases)).ok).toBe(true);
    expect(pageScanThreads().map((t) => [t.tid, t.nice])).toEqual(before.map((t) => [t.tid, t.nice]));
  });

  test("a slow parse's worker is lowered to nice 19 while it runs, then retired and replaced by a fresh thread", async () => {
    await scanPage(`Warm ${uniq()}.`, bases);
    await ready();
    const usual = pageScanThreads()[0]!.nice;
    const before = pageScanThreads().map((t) => t.tid);
    // About a second of CPU here (well past PAGE_SCAN_DEMOTE_CPU_MS, well within the 4 s budget).
    const slow = scanPage(`${"*a".repeat(8_000)}\n\n${uniq()}`, bases);
    const lowered = await until(() => pageScanThreads().find((t) => t.busy && t.demoted));
    expect(PAGE_SCAN_DEMOTE_CPU_MS).toBeLessThanOrEqual(200);
    expect(lowered.nice).toBe(19);
    // Other workers are untouched.
    expect(
      pageScanThreads()
        .filter((t) => t.tid !== lowered.tid)
        .every((t) => t.nice === usual),
    ).toBe(true);
    expect((await slow).ok).toBe(true);
    await ready();
    const after = pageScanThreads();
    expect(after.map((t) => t.tid)).not.toContain(lowered.tid);
    expect(after.filter((t) => !before.includes(t.tid)).length).toBe(1);
    expect(after.every((t) => t.nice === usual && !t.demoted)).toBe(true);
  });
});
