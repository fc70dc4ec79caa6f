// hideCookieBanners: DuckDuckGo's autoconsent content script and rules, opting out (decision 1202).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "puppeteer-core";
import { OWN_SCRIPT } from "./settle.ts";

let script: string | null = null;
let rules: unknown = null;

function load(): { script: string; rules: unknown } {
  if (script === null) {
    const dist = dirname(fileURLToPath(import.meta.resolve("@duckduckgo/autoconsent")));
    // named, so that settling can tell its timers from the page's (settle.ts, OWN_SCRIPT)
    script = `${readFileSync(join(dist, "autoconsent.playwright.js"), "utf8")}\n//# sourceURL=${OWN_SCRIPT}`;
    // the compact encoding (opt-out steps only, a third of the size): it is sent to every document
    rules = {
      compact: JSON.parse(
        readFileSync(
          fileURLToPath(import.meta.resolve("@duckduckgo/autoconsent/rules/compact-rules.json")),
          "utf8",
        ),
      ),
    };
  }
  return { script, rules };
}

// The configuration of the package's own puppeteer guide (docs/puppeteer.md), opting out.
const CONFIG = {
  enabled: true,
  autoAction: "optOut",
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  detectRetries: 20,
  isMainWorld: false,
  prehideTimeout: 2000,
  enableHeuristicDetection: true,
  heuristicMode: "tier2",
  logs: {
    lifecycle: false,
    rulesteps: false,
    detectionsteps: false,
    evals: false,
    errors: false,
    messages: false,
    waits: false,
  },
};

type Message = { type?: string; cmp?: string; result?: boolean; id?: string; code?: string };

/**
 * Installs autoconsent in a page before navigation. `settled()` waits (at most `ms`) for a pop-up it
 * found to be handled, and says what happened.
 */
export async function handleCookieBanners(page: Page) {
  const { script: source, rules: bundle } = load();
  let found: string | null = null;
  let done = false;
  let wake: (() => void) | null = null;
  const send = (msg: unknown) =>
    page
      .evaluate((m) => {
        const w = window as unknown as { autoconsentReceiveMessage?: (m: unknown) => Promise<void> };
        return w.autoconsentReceiveMessage?.(m);
      }, msg)
      .catch(() => {});
  await page.exposeFunction("autoconsentSendMessage", async (message: Message) => {
    if (!message || typeof message !== "object") return;
    switch (message.type) {
      case "init":
        return send({ type: "initResp", config: CONFIG, rules: bundle });
      case "eval": {
        const result = await page.evaluate(message.code ?? "undefined").catch(() => false);
        return send({ type: "evalResp", id: message.id, result });
      }
      case "popupFound":
        found = message.cmp ?? "a consent pop-up";
        return;
      case "optOutResult":
      case "autoconsentDone":
      case "autoconsentError":
        if (found) done = true;
        wake?.();
        return;
    }
  });
  await page.evaluateOnNewDocument(source);
  return {
    /** Waits up to `ms` for a found pop-up to be dismissed; returns its name when it was not. */
    async settled(ms: number): Promise<string | null> {
      if (!found || done) return null;
      await Promise.race([new Promise<void>((r) => (wake = r)), Bun.sleep(ms)]);
      return done ? null : found;
    },
    get found() {
      return found;
    },
  };
}
