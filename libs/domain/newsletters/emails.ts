/** The longest address SMTP carries (RFC 5321 §4.5.3.1.3: a 256-octet path less the angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

// A practical address check, the HTML living standard's (https://html.spec.whatwg.org/multipage/input.html#valid-e-mail-address),
// with at least one dot in the domain: what a sign-up form accepts, and nothing SMTP would choke on.
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/**
 * An address as stored and compared: trimmed and lowercased (decision 1101: mailbox providers treat
 * the local part case-insensitively in practice, and two rows for one person mail them twice), or
 * null when it is not an address a sign-up form would accept.
 */
export function normalizeEmail(raw: unknown): string | null {
  if (typeof raw !== "string") return null;
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH) return null;
  if (!EMAIL.test(email)) return null;
  const [local] = email.split("@");
  if (!local || local.length > 64 || local.startsWith(".") || local.endsWith(".") || local.includes(".."))
    return null;
  return email;
}
