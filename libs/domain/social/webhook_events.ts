import { socialAccounts, type Tx } from "@site/db";
import { recordEvent } from "@site/domain/webhooks";
import { and, eq } from "drizzle-orm";
import { accountView } from "./account_view.ts";

/**
 * Records what a post's publication came to, in the transaction that stores its targets (the webhook
 * outbox, decision 0840; which events, decision 0843): `social.post.published` when at least one target
 * went out, `social.post.failed` when at least one did not (a partial failure sends both). `read` answers
 * the post as GET /api/v1/social/posts/<id> does, through that transaction; it runs only when an
 * endpoint wants the event.
 */
export async function recordPostEvents(
  tx: Tx,
  orgId: string,
  targets: { status: string }[],
  read: () => Promise<unknown>,
): Promise<void> {
  if (targets.some((t) => t.status === "published"))
    await recordEvent(tx, { orgId, type: "social.post.published", data: read });
  if (targets.some((t) => t.status === "failed"))
    await recordEvent(tx, { orgId, type: "social.post.failed", data: read });
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
