import { expect, test } from "bun:test";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { publicFailureMessage } from "./unavailable.ts";

// What a failed render or clip shows its caller: a sentence, never the SQL of a query that failed.
test("a failed query shows the fallback, not its SQL (1507)", () => {
  const err = new DrizzleQueryError(
    'update "screenshot_renders" set "stage" = $1 where "screenshot_renders"."id" = $2',
    ["compose", "0b7c"],
    new Error("stage write refused"),
  );
  expect(err.message.startsWith("Failed query:")).toBe(true);
  expect(publicFailureMessage(err, "The render failed; the credits were refunded.")).toBe(
    "The render failed; the credits were refunded.",
  );
});

test("a sentence meant for users still passes", () => {
  expect(publicFailureMessage(new Error("the page did not finish loading within 20 s"), "fallback")).toBe(
    "the page did not finish loading within 20 s",
  );
});
