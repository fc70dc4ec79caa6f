import type { Config } from "@site/config";
import { dkimSign } from "mailauth/lib/dkim/sign";
import DKIM from "nodemailer/lib/dkim";

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
  "Reply-To",
  "Sender",
  "Cc",
  "MIME-Version",
  "Content-Type",
  "Content-Transfer-Encoding",
];

/**
 * Signs a composed message (relaxed/relaxed, sha256): RSA keys with nodemailer's DKIM signer, Ed25519
 * keys (RFC 8463) with mailauth's, since nodemailer signs rsa-sha256 only. Returns the message with
 * its DKIM-Signature header first. A key the signer cannot use throws: an unsigned mail would fail
 * DMARC at the receiver, so it is better not sent.
 */
export async function signMessage(raw: Buffer, dkim: DkimSettings): Promise<Buffer> {
  if (dkim.keyType === "ed25519") {
    const signed = await dkimSign(raw, {
      canonicalization: "relaxed/relaxed",
      headerList: DKIM_SIGNED_HEADERS,
      signatureData: [
        {
          signingDomain: dkim.domain,
          selector: dkim.selector,
          privateKey: dkim.privateKey,
          algorithm: "ed25519-sha256",
        },
      ],
    } as unknown as Parameters<typeof dkimSign>[1]);
    if (!signed.signatures || (signed.errors && signed.errors.length > 0))
      throw new Error(`DKIM signing failed: ${JSON.stringify(signed.errors ?? "no signature")}`);
    return Buffer.concat([Buffer.from(signed.signatures), raw]);
  }
  const signer = new DKIM({
    domainName: dkim.domain,
    keySelector: dkim.selector,
    privateKey: dkim.privateKey,
    headerFieldNames: DKIM_SIGNED_HEADERS.join(":"),
  });
  const chunks: Buffer[] = [];
  const stream = signer.sign(raw);
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const out = Buffer.concat(chunks);
  // nodemailer leaves a message unsigned (no error) when the key cannot sign.
  if (!out.subarray(0, 20).toString("latin1").toLowerCase().startsWith("dkim-signature:"))
    throw new Error("DKIM signing failed: the RSA key did not sign");
  return out;
}
