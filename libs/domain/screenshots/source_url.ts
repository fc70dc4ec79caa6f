import { isIP } from "node:net";
import { validationError } from "@site/domain/core";
import { classifyIp, isExemptHost, isLocalNetworkAddress, LOCAL_NETWORK_HINT } from "@site/net";

/** True for an IP literal that is not a public address (the same classification as URL import). */
export function isNonPublicIp(ip: string): boolean {
  return classifyIp(ip) !== null;
}

/**
 * Checks a page URL to film: http(s), no credentials, a host that is not a private address or a
 * local name (FETCH_ALLOW_HOSTS exempts exactly its host:port). DNS is checked again when filming.
 * Returns the normalized URL (lowercase host, default port and fragment dropped).
 */
export function parsePublicPageUrl(
  raw: unknown,
  allowHosts: readonly string[],
  opts: { field?: string; localNetwork?: boolean } = {},
): string {
  const field = opts.field ?? "url";
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
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  if (isExemptHost(host, port, allowHosts)) return url.href;
  // Development switch: this machine and its network may be filmed (the browser's guard agrees).
  if (opts.localNetwork && (isIP(host) ? isLocalNetworkAddress(host) : true)) return url.href;
  if (
    isIP(host)
      ? isNonPublicIp(host)
      : !host.includes(".") ||
        /\.(localhost|local|internal|lan|home\.arpa)$/.test(host) ||
        host === "localhost"
  ) {
    throw validationError(field, `must be a public address; ${LOCAL_NETWORK_HINT}`);
  }
  return url.href;
}
