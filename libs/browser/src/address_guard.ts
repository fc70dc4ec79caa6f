import { classifyIp, isExemptHost, isLocalNetworkAddress, systemResolver } from "@site/net";
import type { HTTPRequest, Page } from "puppeteer-core";

/** Says whether an IP address literal is off limits (private, loopback, link-local…); from libs/net. */
export type AddressCheck = (ip: string) => boolean;

/** The requests the page-level guard refused, by URL (for readable warnings). */
/** What the guard refused: non-public URLs (`blocked`), and how many requests `refuse` took (`refused`). */
export type GuardLog = { blocked: string[]; refused?: number };

/** A URL check done before the browser is asked for it. */
export type UrlGuard = (url: string) => Promise<boolean>;

const OPEN_SCHEMES = new Set(["data:", "blob:", "about:"]);
const NET_SCHEMES = new Set(["http:", "https:", "ws:", "wss:"]);

function defaultPort(protocol: string): number {
  return protocol === "https:" || protocol === "wss:" ? 443 : 80;
}

/** True when an address is off limits for the browser: libs/net's classification says it is not public. */
export const isBlockedAddress: AddressCheck = (ip) => classifyIp(ip) !== null;

/**
 * The address check a configuration asks for: `isBlockedAddress`, or, with
 * ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT, one that lets this machine and its private network through.
 */
export function addressCheckFor(config: { allowLocalNetworkForDevelopment: boolean }): AddressCheck {
  if (!config.allowLocalNetworkForDevelopment) return isBlockedAddress;
  return (ip) => isBlockedAddress(ip) && !isLocalNetworkAddress(ip);
}

/** True when `host:port` of the URL is listed in FETCH_ALLOW_HOSTS. */
export function isAllowListed(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isExemptHost(host, url.port ? Number(url.port) : defaultPort(url.protocol), allowHosts);
}

/**
 * Decides one URL: allowed when every address its host resolves to passes `isBlocked`, or it is
 * allow-listed. This is the readable layer only (a named URL in a warning, a clear error for a page or a
 * redirect); what the browser may connect to is decided by its egress proxy, below the page.
 */
export function createUrlGuard(opts: { isBlocked: AddressCheck; allowHosts: readonly string[] }): UrlGuard {
  const cache = new Map<string, Promise<boolean>>();
  const hostIsPublic = (host: string) => {
    let hit = cache.get(host);
    if (!hit) {
      hit = systemResolver(host).then(
        (addrs) => addrs.length > 0 && addrs.every((a) => !opts.isBlocked(a.address)),
        () => false,
      );
      cache.set(host, hit);
    }
    return hit;
  };
  return async (raw: string): Promise<boolean> => {
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
}

/** What a guarded page's requests are judged by: the URL check, where refusals are logged, and what blockAds refuses. */
export type GuardRules = {
  check: UrlGuard;
  log: GuardLog;
  /** Requests refused before the address check (blockAds), counted in `log.refused`. */
  refuse?: (req: HTTPRequest) => boolean;
};

/** A page whose request guard is installed; its rules are given (or replaced) with `use`. */
export type ArmedGuard = { use(rules: GuardRules): void };

/**
 * Installs the request guard in a page before it is needed (a spare page of the pool), with its rules
 * given later by `use`: until then every request is refused. The page's requests are then judged as
 * `guardPage` says.
 */
export async function armGuard(page: Page): Promise<ArmedGuard> {
  let rules: GuardRules | null = null;
  await Promise.all([page.setBypassServiceWorker(true), page.setRequestInterception(true)]);
  page.on("request", (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    const r = rules;
    if (!r) {
      req.abort("blockedbyclient").catch(() => {});
      return;
    }
    if (r.refuse?.(req)) {
      r.log.refused = (r.log.refused ?? 0) + 1;
      req.abort("blockedbyclient").catch(() => {});
      return;
    }
    r.check(req.url())
      .then(
        (ok) => {
          if (ok) return req.continue();
          r.log.blocked.push(req.url());
          return req.abort("blockedbyclient");
        },
        () => req.abort("blockedbyclient"),
      )
      .catch(() => {});
  });
  return {
    use(next) {
      rules = next;
    },
  };
}

/**
 * Names the page's own requests (documents, frames, sub-resources, each redirect hop) that the guard
 * refuses, and stops them early with a readable reason. Workers, service workers, WebSockets and WebRTC
 * are not all visible here; they need nothing from this layer, since every connection the browser makes
 * goes through the egress proxy, which applies the same rules and reports its refusals.
 */
export async function guardPage(
  page: Page,
  check: UrlGuard,
  log: GuardLog,
  /** Requests refused before the address check (blockAds), counted in `log.refused`. */
  refuse?: (req: HTTPRequest) => boolean,
): Promise<void> {
  (await armGuard(page)).use({ check, log, refuse });
}
