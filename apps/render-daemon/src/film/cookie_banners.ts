// hideCookieBanners: DuckDuckGo's autoconsent content script and rules, opting out (decision 1202).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { filterCompactRules } from "@duckduckgo/autoconsent";
import type { Page } from "puppeteer-core";
import { OWN_SCRIPT } from "./settle.ts";

type CompactRules = Parameters<typeof filterCompactRules>[0];

/**
 * Runs before the content script takes `autoconsentSendMessage` (the binding): its state reports, which
 * nothing here reads, stay in the page instead of crossing DevTools (decision 1514).
 */
const DROP_REPORTS = `(() => {
  const send = window.autoconsentSendMessage;
  if (typeof send !== "function") return;
  window.autoconsentSendMessage = (m) => (m && m.type === "report" ? Promise.resolve() : send(m));
})();`;

let script: string | null = null;
let rules: CompactRules | null = null;
/** The rules a page no site-specific rule matches gets (most pages): the same object every time. */
let genericOnly: ReturnType<typeof filterCompactRules> | null = null;
let sitePatterns: RegExp[] | null = null;

function load(): { script: string; rules: CompactRules } {
  if (script === null) {
    const dist = dirname(fileURLToPath(import.meta.resolve("@duckduckgo/autoconsent")));
    // named, so that settling can tell its timers from the page's (settle.ts, OWN_SCRIPT); its progress
    // reports (six a page, each a binding call and its answer over DevTools) are dropped in the page
    script = `${DROP_REPORTS}\n${readFileSync(join(dist, "autoconsent.playwright.js"), "utf8")}\n//# sourceURL=${OWN_SCRIPT}`;
    // the compact encoding (opt-out steps only, a third of the size); each document gets its share (rulesFor)
    rules = JSON.parse(
      readFileSync(
        fileURLToPath(import.meta.resolve("@duckduckgo/autoconsent/rules/compact-rules.json")),
        "utf8",
      ),
    ) as CompactRules;
  }
  return { script, rules: rules as CompactRules };
}

/**
 * The rules for one document, as the package's own extension sends them (filterCompactRules): the
 * generic rules, plus the site-specific ones whose URL pattern matches — a quarter of the bundle's bytes
 * for most pages, so less to send, decode and try on every document.
 */
export function rulesFor(url: string): ReturnType<typeof filterCompactRules> {
  const all = load().rules;
  sitePatterns ??= all.r
    .slice(all.index.specificRuleRange[0], all.index.specificRuleRange[1])
    .flatMap((r) => {
      try {
        return r[3] ? [new RegExp(r[3])] : [];
      } catch {
        return [];
      }
    });
  // a site-specific rule for this URL: filtered for it; otherwise the generic rules, filtered once
  if (sitePatterns.some((p) => p.test(url))) return filterCompactRules(all, { url, mainFrame: true });
  genericOnly ??= filterCompactRules(all, { url, mainFrame: true });
  return genericOnly;
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
  // the content script runs in the page's main world (evaluateOnNewDocument): rule snippets are called
  // there, as the daemon's page.evaluate of them did, without a message and a round trip each (1514)
  isMainWorld: true,
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

type Message = { type?: string; cmp?: string; result?: boolean; id?: string; code?: string; url?: string };

/**
 * Installs autoconsent in a page before navigation (a spare page of the pool, before its film is
 * known). `settled()` waits (at most `ms`) for a pop-up it found to be handled, and says what happened;
 * `disable()` takes it out again before navigation (hideCookieBanners: false).
 */
export async function handleCookieBanners(page: Page) {
  const { script: source } = load();
  let enabled = true;
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
  let messages = 0;
  await page.exposeFunction("autoconsentSendMessage", async (message: Message) => {
    messages++;
    if (!enabled || !message || typeof message !== "object") return;
    switch (message.type) {
      case "init":
        // only the main frame answers (page.evaluate): its rules, for its URL
        return send({
          type: "initResp",
          config: CONFIG,
          rules: { compact: rulesFor(message.url ?? page.url()) },
        });
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
  // after the binding: the content script calls it as it starts
  const { identifier } = await page.evaluateOnNewDocument(source);
  return {
    /** Before navigation: no content script in the page's documents, and no message answered. */
    async disable(): Promise<void> {
      enabled = false;
      await page.removeScriptToEvaluateOnNewDocument(identifier);
    },
    /** Waits up to `ms` for a found pop-up to be dismissed; returns its name when it was not. */
    async settled(ms: number): Promise<string | null> {
      if (!found || done) return null;
      await Promise.race([new Promise<void>((r) => (wake = r)), Bun.sleep(ms)]);
      return done ? null : found;
    },
    get found() {
      return found;
    },
    /** Messages the page's content script sent over DevTools so far. */
    get messages() {
      return messages;
    },
  };
}

/** A page's autoconsent (handleCookieBanners). */
export type CookieBanners = Awaited<ReturnType<typeof handleCookieBanners>>;
