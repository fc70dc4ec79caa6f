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

/**
 * What is wrong with a list that must order a whole set (the pages of a site, the items of a
 * collection): ids of the set it lacks, ids that name nothing of it, ids given more than once. One
 * Problem each under `field`, listing its ids; none when the list is exactly the set, in some order.
 */
export function orderProblems(
  field: string,
  existing: Set<string>,
  ids: string[],
  what: { unit: string; whole: string },
): Problem[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) (seen.has(id) ? repeated : seen).add(id);
  const lists: [string[], string][] = [
    [[...existing].filter((id) => !seen.has(id)), `missing ${what.unit}(s) of ${what.whole}`],
    [[...seen].filter((id) => !existing.has(id)), `id(s) name no ${what.unit} of ${what.whole}`],
    [[...repeated], "id(s) given more than once"],
  ];
  return lists
    .filter(([list]) => list.length > 0)
    .map(([list, message]) => ({
      field,
      ids: list,
      message: `${list.length} ${message}: ${list.join(", ")}`,
    }));
}
