import type { Config } from "@site/config";
import { dkimSign } from "mailauth/lib/dkim/sign";

/** The DKIM settings of the configuration (DKIM_DOMAIN, DKIM_SELECTOR, DKIM_PRIVATE_KEY_FILE). */
export type DkimSettings = NonNullable<Config["newsletter"]["dkim"]>;

/**
 * The header fields every signature covers (`h=`), those of RFC 6376 §5.4.1 a sender should sign plus
 * both RFC 8058 headers: a one-click unsubscribe is honoured only when the signature covers
 * List-Unsubscribe and List-Unsubscribe-Post (RFC 8058 §4,
 * https://www.rfc-editor.org/rfc/rfc8058#section-4). A field the message lacks is left out.
 */
export const DKIM_SIGNED_HEADERS = [
  "From",
  "To",
  "Subject",
  "Date",
  "Message-ID",
  "List-Unsubscribe",
  "List-Unsubscribe-Post",
  "Feedback-ID",
  "Reply-To",
  "Sender",
  "Cc",
  "MIME-Version",
  "Content-Type",
  "Content-Transfer-Encoding",
];

/**
 * Signs a composed message with every configured key (relaxed/relaxed, sha256; one DKIM-Signature
 * each, RFC 6376 §4.2; RSA and Ed25519 together as RFC 8463 §3 advises: a receiver that verifies only
 * RSA still finds a valid signature). RSA keys sign rsa-sha256 and Ed25519 keys ed25519-sha256, all with
 * mailauth's signer (nodemailer's signs rsa-sha256 only). Returns the message with its signatures
 * first. A key the signer cannot use throws: an unsigned mail would fail DMARC at the receiver, so it
 * is better not sent.
 */
export async function signMessage(raw: Buffer, dkim: DkimSettings): Promise<Buffer> {
  const signed = await dkimSign(raw, {
    canonicalization: "relaxed/relaxed",
    headerList: DKIM_SIGNED_HEADERS,
    signatureData: dkim.keys.map((k) => ({
      signingDomain: dkim.domain,
      selector: k.selector,
      privateKey: k.privateKey,
      algorithm: k.keyType === "ed25519" ? "ed25519-sha256" : "rsa-sha256",
    })),
  } as unknown as Parameters<typeof dkimSign>[1]);
  const count = (signed.signatures?.match(/^DKIM-Signature:/gim) ?? []).length;
  if (!signed.signatures || (signed.errors && signed.errors.length > 0) || count !== dkim.keys.length)
    throw new Error(`DKIM signing failed: ${JSON.stringify(signed.errors ?? "no signature")}`);
  return Buffer.concat([Buffer.from(signed.signatures), raw]);
}
