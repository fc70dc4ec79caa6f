import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { until } from "../testing/mod.ts";
import { launchChromium } from "./chromium.ts";
import { findBrowser } from "./find_browser.ts";
import { processesUsingProfile, sweepOrphanBrowsers } from "./profiles.ts";

const CHILD = join(import.meta.dir, "..", "testing", "launch_child.ts");
const chromium = findBrowser(null);

/** Runs the stand-in daemon, reads what it launched, and SIGKILLs it. */
async function launchAndKill(mode: "pipe" | "legacy"): Promise<{ pid: number; profile: string }> {
  const child = Bun.spawn(["bun", CHILD, mode], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the child exited before launching");
    text += new TextDecoder().decode(value);
  }
  const launched = JSON.parse(text.split("\n")[0]!) as { pid: number; profile: string };
  expect(processesUsingProfile(launched.profile)).toContain(launched.pid);
  child.kill("SIGKILL");
  await child.exited;
  return launched;
}

const left: string[] = [];
afterAll(() => {
  // Whatever a failed test left behind goes (its owner, the child, is dead).
  for (const profile of left) for (const pid of processesUsingProfile(profile)) process.kill(pid, "SIGKILL");
  sweepOrphanBrowsers();
});

describe.skipIf(!chromium)("Chromium does not outlive the process that launched it", () => {
  test("a SIGKILLed daemon's browser, and every helper process of it, exits within seconds", async () => {
    const { profile } = await launchAndKill("pipe");
    left.push(profile);
    const started = Date.now();
    await until(async () => processesUsingProfile(profile).length === 0, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    // Its profile is swept at the next start, its owner being dead.
    expect(existsSync(profile)).toBe(true);
    sweepOrphanBrowsers();
    expect(existsSync(profile)).toBe(false);
  }, 60_000);

  test("the start-up sweep kills a browser left by a dead daemon and removes its profile", async () => {
    const { pid, profile } = await launchAndKill("legacy");
    left.push(profile);
    // Launched without the pipe, it survives its daemon: what a previous version left behind.
    await new Promise((r) => setTimeout(r, 500));
    expect(processesUsingProfile(profile)).toContain(pid);
    const swept = sweepOrphanBrowsers();
    expect(swept.killed).toBeGreaterThanOrEqual(1);
    await until(async () => processesUsingProfile(profile).length === 0, 10_000);
    expect(existsSync(profile)).toBe(false);
  }, 60_000);

  test("the sweep leaves the browsers of a live owner alone", async () => {
    const mine = await launchChromium(chromium!, { gpu: false, allowHosts: [] });
    try {
      sweepOrphanBrowsers();
      expect(existsSync(mine.profileDir)).toBe(true);
      expect(mine.browser.connected).toBe(true);
      expect(processesUsingProfile(mine.profileDir).length).toBeGreaterThan(0);
    } finally {
      await mine.close();
    }
    expect(existsSync(mine.profileDir)).toBe(false);
  }, 60_000);
});
