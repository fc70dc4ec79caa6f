import type { Config, Logger } from "@site/config";
import type { CDPSession, Page } from "puppeteer-core";
import { addressCheckFor, createUrlGuard, guardPage } from "./address_guard.ts";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";
import { findBrowser } from "./find_browser.ts";

/** A signed-in browser's state, stored encrypted against a site. */
export type BrowserSession = {
  cookies: unknown[];
  localStorage: Record<string, Record<string, string>>;
};

/** The size of the hosted browser's screen, in CSS pixels. */
export const SCREEN = { width: 1280, height: 800 };

/** An input event the sign-in page forwards to the hosted browser. */
export type InputEvent =
  | { t: "mouse"; type: "move" | "down" | "up"; x: number; y: number }
  | { t: "wheel"; x: number; y: number; dx: number; dy: number }
  | { t: "text"; text: string }
  | { t: "key"; key: SpecialKey };

const SPECIAL_KEYS = [
  "Enter",
  "Backspace",
  "Tab",
  "Delete",
  "Escape",
  "ArrowLeft",
  "ArrowRight",
  "ArrowUp",
  "ArrowDown",
  "Home",
  "End",
] as const;
type SpecialKey = (typeof SPECIAL_KEYS)[number];

const num = (v: unknown, min: number, max: number): number | null =>
  typeof v === "number" && Number.isFinite(v) && v >= min && v <= max ? v : null;

/** Checks a message from the page; null for anything that is not a well-formed input event. */
export function parseInputEvent(raw: unknown): InputEvent | null {
  const m = raw as Record<string, unknown> | null;
  if (!m || typeof m !== "object") return null;
  if (m.t === "mouse" && (m.type === "move" || m.type === "down" || m.type === "up")) {
    const x = num(m.x, 0, SCREEN.width);
    const y = num(m.y, 0, SCREEN.height);
    return x === null || y === null ? null : { t: "mouse", type: m.type, x, y };
  }
  if (m.t === "wheel") {
    const x = num(m.x, 0, SCREEN.width);
    const y = num(m.y, 0, SCREEN.height);
    const dx = num(m.dx, -5000, 5000);
    const dy = num(m.dy, -5000, 5000);
    return x === null || y === null || dx === null || dy === null ? null : { t: "wheel", x, y, dx, dy };
  }
  if (m.t === "text" && typeof m.text === "string" && m.text.length > 0 && m.text.length <= 200)
    return { t: "text", text: m.text };
  if (m.t === "key" && SPECIAL_KEYS.includes(m.key as SpecialKey))
    return { t: "key", key: m.key as SpecialKey };
  return null;
}

/** A Chromium the owner drives from the sign-in page: screencast out, input in, session collected at Done. */
export type HostedBrowser = {
  startScreencast(onFrame: (jpegBase64: string) => void): Promise<void>;
  input(e: InputEvent): Promise<void>;
  /** The browser's cookies and the local storage of the page's current origin. */
  collect(): Promise<BrowserSession>;
  close(): Promise<void>;
};

/** Launches a hosted browser on `url`; every request passes the same address guard as filming. */
export async function openHostedBrowser(opts: {
  config: Config;
  log: Logger;
  url: string;
}): Promise<HostedBrowser> {
  const executable = findBrowser(opts.config.chromiumPath);
  if (!executable) throw new Error("no browser on this host");
  // Behind its own egress proxy like every browser of ours: the page, its workers, service workers and
  // sockets reach only what the import guard allows, for the whole hour the link lives.
  const launched: LaunchedBrowser = await launchChromium(executable, {
    gpu: opts.config.renderGpu,
    allowHosts: opts.config.fetchAllowHosts,
    localNetwork: opts.config.allowLocalNetworkForDevelopment,
    extraCaFile: opts.config.extraCaFile,
    log: opts.log,
  });
  const stopWatching = launched.onRefused((r) =>
    opts.log.warn("hosted browser: connection refused", { host: r.host, port: r.port, reason: r.reason }),
  );
  let page: Page;
  let cdp: CDPSession;
  try {
    page = await launched.browser.newPage();
    await page.setViewport(SCREEN);
    const guard = createUrlGuard({
      isBlocked: addressCheckFor(opts.config),
      allowHosts: opts.config.fetchAllowHosts,
    });
    await guardPage(page, guard, { blocked: [] });
    cdp = await page.createCDPSession();
    await page.goto(opts.url, { waitUntil: "domcontentloaded", timeout: 30_000 }).catch((err) => {
      opts.log.warn("hosted browser: first load failed", { cause: err });
    });
  } catch (err) {
    stopWatching();
    await launched.close();
    throw err;
  }
  return {
    async startScreencast(onFrame) {
      cdp.on("Page.screencastFrame", (f: { data: string; sessionId: number }) => {
        onFrame(f.data);
        cdp.send("Page.screencastFrameAck", { sessionId: f.sessionId }).catch(() => {});
      });
      await cdp.send("Page.startScreencast", {
        format: "jpeg",
        quality: 70,
        maxWidth: SCREEN.width,
        maxHeight: SCREEN.height,
        everyNthFrame: 1,
      });
    },
    async input(e) {
      if (e.t === "mouse") {
        await page.mouse.move(e.x, e.y);
        if (e.type === "down") await page.mouse.down();
        if (e.type === "up") await page.mouse.up();
      } else if (e.t === "wheel") {
        await page.mouse.move(e.x, e.y);
        await page.mouse.wheel({ deltaX: e.dx, deltaY: e.dy });
      } else if (e.t === "text") {
        await page.keyboard.sendCharacter(e.text);
      } else {
        await page.keyboard.press(e.key);
      }
    },
    async collect() {
      const { cookies } = (await cdp.send("Storage.getCookies")) as {
        cookies: {
          name: string;
          value: string;
          domain: string;
          path: string;
          expires: number;
          httpOnly: boolean;
          secure: boolean;
          sameSite?: string;
        }[];
      };
      const origin = await page.evaluate(() => location.origin).catch(() => "null");
      const items = await page
        .evaluate(() => {
          const out: Record<string, string> = {};
          for (let i = 0; i < localStorage.length; i++) {
            const k = localStorage.key(i);
            if (k !== null) out[k] = localStorage.getItem(k) ?? "";
          }
          return out;
        })
        .catch(() => ({}) as Record<string, string>);
      return {
        cookies: cookies.map((c) => ({
          name: c.name,
          value: c.value,
          domain: c.domain,
          path: c.path,
          expires: c.expires,
          httpOnly: c.httpOnly,
          secure: c.secure,
          ...(c.sameSite ? { sameSite: c.sameSite } : {}),
        })),
        localStorage: origin && origin !== "null" && Object.keys(items).length > 0 ? { [origin]: items } : {},
      };
    },
    close: () => {
      stopWatching();
      return launched.close();
    },
  };
}
