import { isLocalNetworkReason, LOCAL_NETWORK_HINT } from "./local_network.ts";

/** Why an address or URL may not be fetched, or null when it may. */
export type BlockReason = string | null;

/**
 * Parses an IPv4 address the way inet_aton does (what browsers and libc accept): one to four parts,
 * each decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes. Null otherwise.
 */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(p)) n = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = Number.parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isSafeInteger(n)) return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return null;
  const bytes = [...nums];
  for (let i = 3 - nums.length; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return bytes;
}

/** Parses an IPv6 address (with optional brackets and a dotted IPv4 tail) into 16 bytes; null otherwise. */
export function parseIPv6(text: string): number[] | null {
  let s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!s.includes(":") || s.includes("%")) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4 = s.slice(lastColon + 1);
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v4)) return null;
    tail = v4.split(".").map(Number);
    if (tail.some((n) => n > 255)) return null;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = Number.parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

const inV4 = (b: number[], net: number[], bits: number) => {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    const mask = take === 0 ? 0 : (0xff << (8 - take)) & 0xff;
    if ((b[i]! & mask) !== (net[i]! & mask)) return false;
  }
  return true;
};

const V4_BLOCKS: [number[], number, string][] = [
  [[0, 0, 0, 0], 8, "unspecified (0.0.0.0/8)"],
  [[10, 0, 0, 0], 8, "private (10/8)"],
  [[100, 64, 0, 0], 10, "carrier-grade NAT (100.64/10)"],
  [[127, 0, 0, 0], 8, "loopback (127/8)"],
  [[169, 254, 0, 0], 16, "link-local (169.254/16)"],
  [[172, 16, 0, 0], 12, "private (172.16/12)"],
  [[192, 0, 0, 0], 24, "reserved (192.0.0/24)"],
  [[192, 0, 2, 0], 24, "documentation (192.0.2/24)"],
  [[192, 88, 99, 0], 24, "6to4 relay (192.88.99/24)"],
  [[192, 168, 0, 0], 16, "private (192.168/16)"],
  [[198, 18, 0, 0], 15, "benchmarking (198.18/15)"],
  [[198, 51, 100, 0], 24, "documentation (198.51.100/24)"],
  [[203, 0, 113, 0], 24, "documentation (203.0.113/24)"],
  [[224, 0, 0, 0], 4, "multicast (224/4)"],
  [[240, 0, 0, 0], 4, "reserved (240/4, broadcast)"],
];

/** Why an IPv4 address (4 bytes) is not public, or null when it is. */
export function classifyIPv4(b: number[]): BlockReason {
  for (const [net, bits, why] of V4_BLOCKS) if (inV4(b, net, bits)) return why;
  return null;
}

const hex = (b: number[], i: number) => (b[i]! << 8) | b[i + 1]!;

/** Why an IPv6 address (16 bytes) is not public, or null when it is: only global unicast 2000::/3 passes. */
export function classifyIPv6(b: number[]): BlockReason {
  const zeroTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroTo(16)) return "unspecified (::)";
  if (zeroTo(15) && b[15] === 1) return "loopback (::1)";
  if (zeroTo(10) && b[10] === 0xff && b[11] === 0xff) return "IPv4-mapped IPv6 (::ffff:0:0/96)";
  if (zeroTo(12)) return "IPv4-compatible IPv6 (::/96)";
  if (zeroTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0)
    return "IPv4-translated IPv6 (::ffff:0:0:0/96)";
  if (hex(b, 0) === 0x0064 && hex(b, 2) === 0xff9b) return "NAT64 (64:ff9b::/96, 64:ff9b:1::/48)";
  if (hex(b, 0) === 0x0100 && hex(b, 2) === 0 && hex(b, 4) === 0 && hex(b, 6) === 0)
    return "discard-only (100::/64)";
  if (hex(b, 0) === 0x2001 && b[2]! < 0x02) return "IETF special-purpose, Teredo (2001::/23)";
  if (hex(b, 0) === 0x2001 && hex(b, 2) === 0x0db8) return "documentation (2001:db8::/32)";
  if (hex(b, 0) === 0x2002) return "6to4 (2002::/16)";
  if (hex(b, 0) === 0x3fff && b[2]! < 0x10) return "documentation (3fff::/20)";
  if ((b[0]! & 0xfe) === 0xfc) return "unique local (fc00::/7)";
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return "link-local (fe80::/10)";
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return "site-local (fec0::/10)";
  if (b[0] === 0xff) return "multicast (ff00::/8)";
  if ((b[0]! & 0xe0) !== 0x20) return "reserved (outside 2000::/3)";
  return null;
}

/** Why an IP address in text form (v4 or v6) is not public, or null when it is. */
export function classifyIp(address: string): BlockReason {
  const v6 = parseIPv6(address);
  if (v6) return classifyIPv6(v6);
  const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(address) ? parseIPv4(address) : null;
  if (v4) return classifyIPv4(v4);
  return "not an IP address";
}

/** True for an address the development switch opens (loopback, private, unique local). */
export function isLocalNetworkAddress(ip: string): boolean {
  return isLocalNetworkReason(classifyIp(ip));
}

/**
 * A URL target after the pure checks: host, port, and the literal address when the host is one;
 * `localNetwork` when the development switch lets loopback and private addresses through.
 */
export type FetchTarget = {
  url: URL;
  host: string;
  port: number;
  literal: string | null;
  exempt: boolean;
  localNetwork?: boolean;
};

/** Why a URL cannot be a fetch target: bad URL (invalid) or a disallowed host (blocked). */
export class TargetError extends Error {
  readonly kind: "invalid" | "blocked";
  constructor(kind: "invalid" | "blocked", message: string) {
    super(message);
    this.name = "TargetError";
    this.kind = kind;
  }
}

/** True when `host:port` is in the FETCH_ALLOW_HOSTS list (the test exemption). */
export function isExemptHost(host: string, port: number, allowHosts: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowHosts.some(
    (a) => a === `${h}:${port}` || a === `[${h}]:${port}` || `[${a}]` === `${h}:${port}`,
  );
}

/**
 * Checks a URL before any connection: https only, no credentials, and a host that is not a non-public
 * IP literal in any spelling (decimal, octal, hex, short IPv4; mapped, NAT64, 6to4, Teredo IPv6) nor
 * `localhost`. Host names still need their resolved addresses checked with classifyIp.
 */
export function checkFetchTarget(
  raw: string,
  allowHosts: readonly string[] = [],
  opts: { localNetwork?: boolean; plainHttpToExempt?: boolean } = {},
): FetchTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetError("invalid", "not a valid URL");
  }
  // Development switch: plain http too, for local servers (resolvePinned keeps it to local addresses).
  // A FETCH_ALLOW_HOSTS host may be plain http where the caller allows it (webhook test receivers).
  const exemptHttp =
    url.protocol === "http:" &&
    opts.plainHttpToExempt === true &&
    isExemptHost(url.hostname.replace(/^\[|\]$/g, ""), Number(url.port || 80), allowHosts);
  const http = url.protocol === "http:" && (opts.localNetwork === true || exemptHttp);
  if (url.protocol !== "https:" && !http) throw new TargetError("invalid", "only https URLs can be fetched");
  if (url.username || url.password) throw new TargetError("invalid", "URLs with credentials are refused");
  const port = url.port ? Number(url.port) : http ? 80 : 443;
  let host = url.hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  host = host.replace(/\.$/, "");
  if (!host) throw new TargetError("invalid", "the URL has no host");
  const exempt = isExemptHost(host, port, allowHosts);
  const v6 = parseIPv6(host);
  // The WHATWG parser already turns decimal/octal/hex/short IPv4 forms into dotted quads; parse loosely anyway.
  const v4 = v6 ? null : parseIPv4(host);
  const literal = v6 ? host : v4 ? v4.join(".") : null;
  const local = opts.localNetwork === true;
  const open = (why: BlockReason) => why === null || (local && isLocalNetworkReason(why));
  if (!exempt) {
    if (v6) {
      const why = classifyIPv6(v6);
      if (!open(why)) throw new TargetError("blocked", `address not allowed: ${why}; ${LOCAL_NETWORK_HINT}`);
    } else if (v4) {
      const why = classifyIPv4(v4);
      if (!open(why)) throw new TargetError("blocked", `address not allowed: ${why}; ${LOCAL_NETWORK_HINT}`);
    } else if (!local && (host === "localhost" || host.endsWith(".localhost") || !host.includes("."))) {
      throw new TargetError("blocked", `host not allowed: local names are refused; ${LOCAL_NETWORK_HINT}`);
    } else if (/^[0-9.]+$/.test(host) || /(^|\.)0x[0-9a-f]*$/i.test(host)) {
      throw new TargetError("blocked", "host not allowed: numeric host that is not an IPv4 address");
    }
  }
  return { url, host, port, literal, exempt, ...(local ? { localNetwork: true } : {}) };
}
