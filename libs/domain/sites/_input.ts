import { AppError } from "@site/domain/core";

/** One refused part of an input: where (a dotted path) and why. */
export type Problem = { field: string; message: string } & Record<string, unknown>;

/** 400 VALIDATION_ERROR listing every problem (the message names the first few). */
export function refuse(problems: Problem[]): AppError {
  const shown = problems
    .slice(0, 5)
    .map((p) => `${p.field}: ${p.message}`)
    .join("; ");
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : "";
  return new AppError("VALIDATION_ERROR", `${shown}${more}`, problems);
}
