import { createPrivateKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { ConfigError } from "./config_error.ts";
import { type Env, listSetting, rawSetting } from "./read_setting.ts";

/** One DKIM key: its selector and PEM private key. */
export type DkimKey = {
  selector: string;
  /** The private key as PEM (read from DKIM_PRIVATE_KEY_FILE at boot). */
  privateKey: string;
  /** rsa (signed rsa-sha256) or ed25519 (signed ed25519-sha256, RFC 8463). */
  keyType: "rsa" | "ed25519";
};

/** DKIM signing of newsletter mail (DKIM_DOMAIN; DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE, one or more each). */
export type DkimSettings = {
  domain: string;
  /** Every key signs (one DKIM-Signature each), in the order given. */
  keys: DkimKey[];
};

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i;

/**
 * The name this service gives in EHLO (RFC 5321 §4.1.1.1: the client's fully qualified domain name,
 * or an address literal when it has none): SMTP_HELO_NAME, else the host of PUBLIC_BASE_URL. An IP
 * address becomes an address literal (`[127.0.0.1]`, `[IPv6:::1]`, RFC 5321 §4.1.3); `localhost` (or
 * another dotless name) is never sent: relays such as Google's answer 421 to it, so the loopback
 * literal is used instead, and SMTP_HELO_NAME=localhost is refused at boot.
 */
export function heloNameSetting(env: Env, publicBaseUrl: string): string {
  const raw = rawSetting(env, "SMTP_HELO_NAME")?.trim();
  if (raw) {
    const literal = /^\[(?:IPv6:)?([^\]]+)\]$/i.exec(raw);
    if (literal && isIP(literal[1]!)) return raw;
    if (isIP(raw)) return addressLiteral(raw);
    if (!DOMAIN.test(raw))
      throw new ConfigError(
        `SMTP_HELO_NAME must be this host's fully qualified domain name (like mail.example.com) or an address literal ([192.0.2.1]); got "${raw}"`,
      );
    return raw.toLowerCase();
  }
  const host = new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return addressLiteral(host);
  if (DOMAIN.test(host)) return host.toLowerCase();
  return "[127.0.0.1]";
}

function addressLiteral(ip: string): string {
  return isIP(ip) === 6 ? `[IPv6:${ip}]` : `[${ip}]`;
}

/**
 * DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE: all three or none. The selector and key file
 * settings may each list several, comma-separated and in the same order (RFC 6376 §4.2 lets a message
 * carry several signatures; RFC 8463 §3 advises signing with both an RSA and an Ed25519 key). Each key
 * is RSA or Ed25519; an Ed25519 key without an RSA key is refused: Gmail, Outlook and Yahoo verify RSA
 * signatures only, so such mail would have no valid DKIM there (decision 1453).
 */
export function dkimSetting(env: Env): DkimSettings | null {
  const domain = rawSetting(env, "DKIM_DOMAIN")?.trim() || "";
  const selectors = listSetting(env, "DKIM_SELECTOR");
  const files = listSetting(env, "DKIM_PRIVATE_KEY_FILE");
  if (!domain && selectors.length === 0 && files.length === 0) return null;
  if (!domain || selectors.length === 0 || files.length === 0)
    throw new ConfigError(
      "DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE go together: set all three to sign newsletter mail, or none",
    );
  if (selectors.length !== files.length)
    throw new ConfigError(
      `DKIM_SELECTOR lists ${selectors.length} selector(s) and DKIM_PRIVATE_KEY_FILE ${files.length} key file(s): give one selector per key, in the same order`,
    );
  if (!DOMAIN.test(domain)) throw new ConfigError(`DKIM_DOMAIN must be a domain name, got "${domain}"`);
  const keys = selectors.map((selector, i) => dkimKey(selector, files[i]!));
  if (new Set(selectors.map((x) => x.toLowerCase())).size !== selectors.length)
    throw new ConfigError("DKIM_SELECTOR: each key needs its own selector (its own DNS record)");
  if (!keys.some((k) => k.keyType === "rsa"))
    throw new ConfigError(
      "DKIM_PRIVATE_KEY_FILE: an Ed25519 key alone is refused: Gmail, Outlook and Yahoo verify only RSA signatures, so the mail would fail DMARC there. Add an RSA key beside it (DKIM_SELECTOR=rsa2026,ed2026 DKIM_PRIVATE_KEY_FILE=/etc/site/rsa.pem,/etc/site/ed.pem)",
    );
  return { domain: domain.toLowerCase(), keys };
}

function dkimKey(selector: string, file: string): DkimKey {
  if (!/^[a-z0-9](?:[a-z0-9._-]{0,62})$/i.test(selector))
    throw new ConfigError(`DKIM_SELECTOR must be a DNS label like "news2026", got "${selector}"`);
  if (!existsSync(file))
    throw new ConfigError(`DKIM_PRIVATE_KEY_FILE names a file that does not exist: "${file}"`);
  const privateKey = readFileSync(file, "utf8");
  let keyType: string | undefined;
  try {
    keyType = createPrivateKey(privateKey).asymmetricKeyType;
  } catch (err) {
    throw new ConfigError(
      `DKIM_PRIVATE_KEY_FILE: "${file}" is not a PEM private key (${(err as Error).message})`,
    );
  }
  if (keyType !== "rsa" && keyType !== "ed25519")
    throw new ConfigError(`DKIM_PRIVATE_KEY_FILE: the key is ${keyType}; DKIM signs with RSA or Ed25519`);
  return { selector, privateKey, keyType };
}

/** MAIL_BOUNCE_ADDRESS (the envelope sender, tagged per message), default MAIL_FROM. */
export function bounceAddressSetting(env: Env, mailFrom: string): string {
  const raw = rawSetting(env, "MAIL_BOUNCE_ADDRESS")?.trim();
  if (!raw) return mailFrom;
  if (!/^[^\s@<>"+]+@[^\s@<>"]+$/.test(raw))
    throw new ConfigError(
      `MAIL_BOUNCE_ADDRESS must be an address like bounces@example.com (without a +tag: one is added per message), got "${raw}"`,
    );
  return raw;
}
