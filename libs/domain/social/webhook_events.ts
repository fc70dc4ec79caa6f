import { socialAccounts, type Tx } from "@site/db";
import { recordEvent } from "@site/domain/webhooks";
import { and, eq } from "drizzle-orm";
import { accountView } from "./account_view.ts";

/**
 * Records the end of one target in the transaction that ends it (the webhook outbox, decision 0840):
 * `social.post.published` or `social.post.failed`, one per target as it ends (CONTRACT "Social posts on
 * their own clock"; decision 1470). `data` is the post as GET /api/v1/social/posts/<id> answers it at
 * that commit, read through the transaction only when an endpoint wants the event, with `target`: the
 * target that ended (platform, accountId, url, status, error).
 */
export async function recordTargetEvent(
  tx: Tx,
  orgId: string,
  target: { platform: string; accountId: string; url: string | null; status: string; error: string | null },
  read: () => Promise<object>,
): Promise<void> {
  if (target.status !== "published" && target.status !== "failed") return;
  const { platform, accountId, url, status, error } = target;
  await recordEvent(tx, {
    orgId,
    type: status === "published" ? "social.post.published" : "social.post.failed",
    data: async () => ({ ...(await read()), target: { platform, accountId, url, status, error } }),
  });
}

/**
 * Records `social.account.reconnect_required` in the transaction that marked the account (a refused
 * token renewal, or a token that expired with no way to renew it); `data` is the account as the accounts
 * listing shows it, with its new status, read through that transaction.
 */
export async function recordReconnectRequired(tx: Tx, account: { id: string; orgId: string }): Promise<void> {
  await recordEvent(tx, {
    orgId: account.orgId,
    type: "social.account.reconnect_required",
    data: async () => {
      const [row] = await tx
        .select(accountView)
        .from(socialAccounts)
        .where(and(eq(socialAccounts.id, account.id), eq(socialAccounts.orgId, account.orgId)));
      return row ?? null;
    },
  });
}
