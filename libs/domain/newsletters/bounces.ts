import type { Config } from "@site/config";
import { safeEqual, sign } from "@site/domain/core";

/**
 * Whom a tagged envelope sender names: `r` a campaign recipient row (its mail), `s` a subscriber (a
 * confirmation mail).
 */
export type BounceRef = { kind: "r" | "s"; id: string };

const TAG = /^([rs])([0-9a-f]{32})\.([0-9a-f]{12})$/;

function mac(config: Pick<Config, "secretKey">, kind: string, hex: string): string {
  return Buffer.from(sign(config.secretKey, "newsletter-bounce", `${kind}${hex}`), "base64url")
    .toString("hex")
    .slice(0, 12);
}

function split(address: string): { local: string; domain: string } {
  const at = address.lastIndexOf("@");
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/**
 * The envelope sender (MAIL FROM, the Return-Path the receiver records) of one message:
 * MAIL_BOUNCE_ADDRESS with `+<kind><id as hex>.<MAC>` after its local part (lowercase hex: some
 * servers fold the case of local parts). The MAC (SECRET_KEY) makes the tag unforgeable: a report can
 * only name a recipient whose own mail it carries. Bounces (RFC 3464) come back to this address.
 */
export function envelopeSender(config: Pick<Config, "secretKey" | "newsletter">, ref: BounceRef): string {
  const { local, domain } = split(config.newsletter.bounceAddress);
  const hex = ref.id.replace(/-/g, "").toLowerCase();
  return `${local}+${ref.kind}${hex}.${mac(config, ref.kind, hex)}@${domain}`;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Every genuine tag of our bounce address found in `text` (a MAC that does not match is ignored). */
export function findBounceRefs(config: Pick<Config, "secretKey" | "newsletter">, text: string): BounceRef[] {
  const { local, domain } = split(config.newsletter.bounceAddress);
  const re = new RegExp(`${escapeRe(local)}\\+([0-9a-z.]{1,60})@${escapeRe(domain)}`, "gi");
  const out = new Map<string, BounceRef>();
  for (const m of text.matchAll(re)) {
    const t = TAG.exec(m[1]!.toLowerCase());
    if (!t) continue;
    const [, kind, hex, given] = t as unknown as [string, "r" | "s", string, string];
    if (!safeEqual(given, mac(config, kind, hex))) continue;
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    out.set(`${kind}${id}`, { kind, id });
  }
  return [...out.values()];
}
