import { bigserial, index, integer, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./_columns.ts";
import { organizations } from "./organizations.ts";

/**
 * Every change of an organization's AI credits. `subject_id` names what a debit or refund paid for: a
 * screenshot or clip render, or an image generation; a refund is unique per subject and reason.
 */
export const creditLedger = pgTable(
  "credit_ledger",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    delta: integer("delta").notNull(),
    reason: text("reason", {
      enum: [
        "grant",
        "screenshot_debit",
        "screenshot_refund",
        "image_debit",
        "image_refund",
        "clip_debit",
        "clip_refund",
      ],
    }).notNull(),
    subjectId: uuid("subject_id"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("credit_ledger_subject_reason").on(t.subjectId, t.reason),
    index("credit_ledger_org_idx").on(t.orgId),
  ],
);
