import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";

/** SHA-256 hex of a secret, the form in which API keys and tokens are stored. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A URL-safe random token of `bytes` bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** A sortable prefixed id for humans reading logs (`key_…`, `rnd_…`). */
export function prefixedId(prefix: string): string {
  const time = Date.now().toString(36).padStart(9, "0");
  return `${prefix}_${time}${randomBytes(8).toString("hex")}`;
}

// Derived keys by secret and purpose: a media list signs 50 grants, each would derive its key again.
const derivedKeys = new Map<string, Uint8Array>();

/** HMAC-SHA256 (base64url) of `message` with a purpose-bound key derived from the secret. */
export function sign(secretKey: string, purpose: string, message: string): string {
  const id = `${purpose}\u0000${secretKey}`;
  let key = derivedKeys.get(id);
  if (!key) {
    key = new Uint8Array(createHmac("sha256", secretKey).update(`purpose:${purpose}`).digest());
    if (derivedKeys.size > 64) derivedKeys.clear();
    derivedKeys.set(id, key);
  }
  // Bun's native HMAC: the same bytes as node:crypto's, several times faster per call.
  return new Bun.CryptoHasher("sha256", key).update(message).digest("base64url");
}

/** Constant-time comparison of two signatures. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function aesKey(secretKey: string): Buffer {
  return createHash("sha256").update(`aes-256-gcm:${secretKey}`).digest();
}

/** Encrypts with AES-256-GCM (text as UTF-8, or bytes as they are); output `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function encryptSecret(secretKey: string, plaintext: string | Uint8Array): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", aesKey(secretKey), iv);
  const bytes = typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext;
  const data = Buffer.concat([cipher.update(bytes), cipher.final()]);
  return [
    "v1",
    iv.toString("base64url"),
    cipher.getAuthTag().toString("base64url"),
    data.toString("base64url"),
  ].join(".");
}

/** Decrypts what encryptSecret wrote; throws if it was tampered with. */
export function decryptSecret(secretKey: string, sealed: string): string {
  return decryptSecretBytes(secretKey, sealed).toString("utf8");
}

/** Decrypts what encryptSecret wrote, as bytes; throws if it was tampered with. */
export function decryptSecretBytes(secretKey: string, sealed: string): Buffer {
  const [v, iv, tag, data] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || data === undefined) throw new Error("unknown sealed format");
  const decipher = createDecipheriv("aes-256-gcm", aesKey(secretKey), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]);
}
