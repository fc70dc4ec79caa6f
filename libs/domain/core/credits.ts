// AI credits: the one place that debits, records and refunds them, for screenshots, clips and images.

import { creditLedger, organizations, type Tx } from "@site/db";
import { and, eq, sql } from "drizzle-orm";
import { AppError } from "./errors.ts";

/** Why a ledger row was written: a debit or refund names what it paid for. */
export type CreditReason = (typeof creditLedger.$inferInsert)["reason"];

/**
 * Debits `amount` credits of an organization inside the caller's transaction, never below zero: 402
 * QUOTA_EXCEEDED ("not enough AI credits: <what>") when short. Record the ledger row with `recordDebit`
 * once the id of what was bought exists (same transaction).
 */
export async function debitCredits(tx: Tx, orgId: string, amount: number, what: string): Promise<void> {
  const [debited] = await tx
    .update(organizations)
    .set({ credits: sql`${organizations.credits} - ${amount}` })
    .where(and(eq(organizations.id, orgId), sql`${organizations.credits} >= ${amount}`))
    .returning({ credits: organizations.credits });
  if (!debited) throw new AppError("QUOTA_EXCEEDED", `not enough AI credits: ${what}`);
}

/** Writes the ledger row of a debit made by `debitCredits` (a negative delta), for the id it bought. */
export async function recordDebit(
  tx: Tx,
  entry: { orgId: string; amount: number; reason: CreditReason; subjectId: string },
): Promise<void> {
  await tx
    .insert(creditLedger)
    .values({ orgId: entry.orgId, delta: -entry.amount, reason: entry.reason, subjectId: entry.subjectId });
}

/**
 * Refunds `amount` credits for `subjectId` (a render or an image generation) exactly once, inside the
 * caller's transaction: the ledger is unique per (subject, reason), so a second call, a retry or a racing process refunds nothing. True when
 * this call refunded.
 */
export async function refundOnce(
  tx: Tx,
  entry: { orgId: string; amount: number; reason: CreditReason; subjectId: string },
): Promise<boolean> {
  const refunded = await tx
    .insert(creditLedger)
    .values({ orgId: entry.orgId, delta: entry.amount, reason: entry.reason, subjectId: entry.subjectId })
    .onConflictDoNothing()
    .returning({ id: creditLedger.id });
  if (refunded.length === 0) return false;
  await tx
    .update(organizations)
    .set({ credits: sql`${organizations.credits} + ${entry.amount}` })
    .where(eq(organizations.id, entry.orgId));
  return true;
}
