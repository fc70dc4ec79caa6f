import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The Standard Webhooks headers of one try: `webhook-id` (the delivery id, the same on every try),
 * `webhook-timestamp` (this try's time, seconds) and `webhook-signature` with one `v1,<base64>` per
 * secret, space-separated (the current secret, then the previous one during a rotation's overlap).
 * Signed by the `standardwebhooks` library, the one receivers verify with.
 */
export function signWebhook(
  secrets: string[],
  msg: { id: string; at: Date; body: string },
): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(msg.id, msg.at, msg.body));
  return {
    "webhook-id": msg.id,
    "webhook-timestamp": String(Math.floor(msg.at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
