import { lookup } from "node:dns/promises";
import { classifyIp, isExemptHost } from "@site/net";
import type { HTTPRequest, Page } from "puppeteer-core";

/** Says whether an IP address literal is off limits (private, loopback, link-local…); from libs/net. */
export type AddressCheck = (ip: string) => boolean;

/** What the guard refused, and responses that came from refused addresses anyway (DNS rebinding). */
export type GuardLog = { blocked: string[]; rebound?: string[] };

/** A URL check; `answeredFromBlocked` re-checks the address Chromium actually connected to. */
export type UrlGuard = ((url: string) => Promise<boolean>) & {
  answeredFromBlocked?: (url: string, remoteIp: string | undefined) => boolean;
};

const OPEN_SCHEMES = new Set(["data:", "blob:", "about:"]);
const NET_SCHEMES = new Set(["http:", "https:", "ws:", "wss:"]);

function defaultPort(protocol: string): number {
  return protocol === "https:" || protocol === "wss:" ? 443 : 80;
}

/** True when an address is off limits for the browser: libs/net's classification says it is not public. */
export const isBlockedAddress: AddressCheck = (ip) => classifyIp(ip) !== null;

/** True when `host:port` of the URL is listed in FETCH_ALLOW_HOSTS. */
export function isAllowListed(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isExemptHost(host, url.port ? Number(url.port) : defaultPort(url.protocol), allowHosts);
}

/** Decides one URL: allowed when every address its host resolves to passes `isBlocked`, or it is allow-listed. */
export function createUrlGuard(opts: { isBlocked: AddressCheck; allowHosts: readonly string[] }): UrlGuard {
  const cache = new Map<string, Promise<boolean>>();
  const hostIsPublic = (host: string) => {
    let hit = cache.get(host);
    if (!hit) {
      hit = lookup(host, { all: true, verbatim: true }).then(
        (addrs) => addrs.length > 0 && addrs.every((a) => !opts.isBlocked(a.address)),
        () => false,
      );
      cache.set(host, hit);
    }
    return hit;
  };
  const check = async (raw: string): Promise<boolean> => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return false;
    }
    if (OPEN_SCHEMES.has(url.protocol)) return true;
    if (!NET_SCHEMES.has(url.protocol)) return false;
    if (isAllowListed(url, opts.allowHosts)) return true;
    return hostIsPublic(url.hostname.replace(/^\[|\]$/g, ""));
  };
  return Object.assign(check, {
    answeredFromBlocked: (raw: string, remoteIp: string | undefined) =>
      answeredFromBlockedAddress(raw, remoteIp, opts),
  });
}

/**
 * True when a response reached the browser from an address the guard refuses although its URL is not
 * allow-listed: the host resolved to a public address for our check, then to a private one for Chromium's
 * own lookup (DNS rebinding). The capture is then discarded.
 */
export function answeredFromBlockedAddress(
  raw: string,
  remoteIp: string | undefined,
  opts: { isBlocked: AddressCheck; allowHosts: readonly string[] },
): boolean {
  if (!remoteIp) return false; // served from cache, a data: URL or a service worker: nothing was connected to
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (!NET_SCHEMES.has(url.protocol) || isAllowListed(url, opts.allowHosts)) return false;
  return opts.isBlocked(remoteIp.replace(/^\[|\]$/g, ""));
}

/**
 * Puts every request of the page (documents, frames, sub-resources, each redirect hop) through the guard.
 * WebSocket, WebTransport and WebRTC are not interceptable, so they are removed from the page instead.
 */
export async function guardPage(page: Page, check: UrlGuard, log: GuardLog): Promise<void> {
  const recheck = check.answeredFromBlocked;
  if (recheck) {
    page.on("response", (res) => {
      if (!recheck(res.url(), res.remoteAddress().ip)) return;
      log.rebound = [...(log.rebound ?? []), res.url()];
    });
  }
  await page.setBypassServiceWorker(true);
  await page.evaluateOnNewDocument(() => {
    for (const name of ["WebSocket", "WebTransport", "RTCPeerConnection", "webkitRTCPeerConnection"]) {
      try {
        Object.defineProperty(globalThis, name, { value: undefined, configurable: false, writable: false });
      } catch {}
    }
  });
  await page.setRequestInterception(true);
  page.on("request", (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    check(req.url())
      .then(
        (ok) => {
          if (ok) return req.continue();
          log.blocked.push(req.url());
          return req.abort("blockedbyclient");
        },
        () => req.abort("blockedbyclient"),
      )
      .catch(() => {});
  });
}
