import { isIP } from "node:net";
import { validationError } from "./errors.ts";

function ipv4Private(ip: string): boolean {
  const [a, b] = ip.split(".").map(Number);
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  );
}

/** True for loopback, private, link-local, unique-local, multicast and reserved IP literals. */
export function isNonPublicIp(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) return ipv4Private(ip);
  if (v !== 6) return false;
  const low = ip.toLowerCase();
  const mapped = low.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return ipv4Private(mapped[1]);
  if (low.startsWith("::ffff:")) return true;
  return (
    low === "::" ||
    low === "::1" ||
    low.startsWith("fc") ||
    low.startsWith("fd") ||
    low.startsWith("fe8") ||
    low.startsWith("fe9") ||
    low.startsWith("fea") ||
    low.startsWith("feb") ||
    low.startsWith("ff")
  );
}

/**
 * Checks a page URL to film: http(s), no credentials, a host that is not a private address or a
 * local name (FETCH_ALLOW_HOSTS exempts exactly its host:port). DNS is checked again when filming.
 * Returns the normalized URL (lowercase host, default port and fragment dropped).
 */
export function parsePublicPageUrl(raw: unknown, allowHosts: readonly string[], field = "url"): string {
  if (typeof raw !== "string" || raw.trim() === "")
    throw validationError(field, "required: a public http(s) page URL");
  if (raw.length > 2048) throw validationError(field, "at most 2048 characters");
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw validationError(field, "not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw validationError(field, "must be http or https");
  if (url.username || url.password) throw validationError(field, "must not carry credentials");
  url.hash = "";
  const hostPort = url.host.toLowerCase();
  if (allowHosts.includes(hostPort)) return url.href;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (
    isIP(host)
      ? isNonPublicIp(host)
      : !host.includes(".") ||
        /\.(localhost|local|internal|lan|home\.arpa)$/.test(host) ||
        host === "localhost"
  ) {
    throw validationError(field, "must be a public address");
  }
  return url.href;
}
