import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { creditsOf, ledgerOf, testContext } from "@site/domain/testing";
import type { Context } from "./context.ts";
import { debitCredits, recordDebit, refundOnce } from "./credits.ts";
import { AppError } from "./errors.ts";
import { createOrganization } from "./organizations.ts";

// The one module that debits, records and refunds AI credits (issue 28 item 1), on a real PostgreSQL:
// never below zero, only the organization's own balance, a refund once per subject and reason even
// when two processes race. Also the focused test StrykerJS runs for credits.ts (docs/mutation-testing.md).

let handle: DbHandle;
let ctx: Context;
beforeAll(async () => {
  handle = await createTestDatabase();
  ctx = testContext(handle.db);
});
afterAll(() => handle.close());

const org = async (credits: number) =>
  (await createOrganization(ctx, { name: `Credits ${randomUUID().slice(0, 6)}`, credits })).id;
const balance = (orgId: string) => creditsOf(handle.db, orgId);
const ledger = (orgId: string) => ledgerOf(handle.db, orgId);
const quotaError = (err: unknown) =>
  err instanceof AppError ? { code: err.code, message: err.message } : { unexpected: String(err) };

describe("debitCredits and recordDebit", () => {
  test("a debit takes exactly the amount from its own organization; the ledger row is written by recordDebit, negative", async () => {
    const a = await org(10);
    const b = await org(10);
    const render = randomUUID();
    await handle.db.transaction(async (tx) => {
      await debitCredits(tx, a, 3, "a screenshot");
      expect(await ledger(a)).toEqual([]);
      await recordDebit(tx, { orgId: a, amount: 3, reason: "screenshot_debit", subjectId: render });
    });
    expect(await balance(a)).toBe(7);
    expect(await balance(b)).toBe(10);
    expect(await ledger(a)).toEqual([[-3, "screenshot_debit", render]]);
    expect(await ledger(b)).toEqual([]);
  });

  test("the whole balance can be spent, to zero exactly", async () => {
    const a = await org(5);
    await handle.db.transaction((tx) => debitCredits(tx, a, 5, "a clip"));
    expect(await balance(a)).toBe(0);
  });

  test("short by one: 402 QUOTA_EXCEEDED naming what was bought, and the balance untouched", async () => {
    const a = await org(4);
    const err = await handle.db
      .transaction((tx) => debitCredits(tx, a, 5, "an image generation"))
      .then(() => null, quotaError);
    expect(err).toEqual({ code: "QUOTA_EXCEEDED", message: "not enough AI credits: an image generation" });
    expect(await balance(a)).toBe(4);
    const zero = await org(0);
    expect(
      await handle.db
        .transaction((tx) => debitCredits(tx, zero, 1, "a screenshot"))
        .then(() => null, quotaError),
    ).toEqual({ code: "QUOTA_EXCEEDED", message: "not enough AI credits: a screenshot" });
    expect(await balance(zero)).toBe(0);
  });

  test("two debits racing for the last credits: one succeeds, the other is refused, never below zero", async () => {
    const a = await org(3);
    const results = await Promise.all(
      [1, 2].map(() =>
        handle.db.transaction((tx) => debitCredits(tx, a, 3, "a screenshot")).then(() => "ok", quotaError),
      ),
    );
    expect(results.filter((r) => r === "ok").length).toBe(1);
    expect(results.filter((r) => r !== "ok")).toEqual([
      { code: "QUOTA_EXCEEDED", message: "not enough AI credits: a screenshot" },
    ]);
    expect(await balance(a)).toBe(0);
  });
});

describe("refundOnce", () => {
  test("gives the amount back once per subject and reason; a second call refunds nothing and says so", async () => {
    const a = await org(10);
    const b = await org(10);
    const render = randomUUID();
    await handle.db.transaction((tx) => debitCredits(tx, a, 4, "a clip"));
    const first = await handle.db.transaction((tx) =>
      refundOnce(tx, { orgId: a, amount: 4, reason: "clip_refund", subjectId: render }),
    );
    const again = await handle.db.transaction((tx) =>
      refundOnce(tx, { orgId: a, amount: 4, reason: "clip_refund", subjectId: render }),
    );
    expect([first, again]).toEqual([true, false]);
    expect(await balance(a)).toBe(10);
    expect(await balance(b)).toBe(10);
    expect(await ledger(a)).toEqual([[4, "clip_refund", render]]);
  });

  test("another subject, or another reason for the same subject, is refunded on its own", async () => {
    const a = await org(0);
    const one = randomUUID();
    const two = randomUUID();
    const refund = (subjectId: string, reason: "screenshot_refund" | "image_refund") =>
      handle.db.transaction((tx) => refundOnce(tx, { orgId: a, amount: 2, reason, subjectId }));
    expect(await refund(one, "screenshot_refund")).toBe(true);
    expect(await refund(two, "screenshot_refund")).toBe(true);
    expect(await refund(one, "image_refund")).toBe(true);
    expect(await balance(a)).toBe(6);
  });

  test("two processes refunding the same render at once: exactly one refunds", async () => {
    const a = await org(0);
    const render = randomUUID();
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        handle.db.transaction((tx) =>
          refundOnce(tx, { orgId: a, amount: 5, reason: "screenshot_refund", subjectId: render }),
        ),
      ),
    );
    expect(results.filter(Boolean).length).toBe(1);
    expect(await balance(a)).toBe(5);
    expect(await ledger(a)).toEqual([[5, "screenshot_refund", render]]);
  });
});
