import { validationError } from "@site/domain/core";

/**
 * Deepest nesting of objects and arrays a request may carry. Real bodies stay under 10 (an MCP tool
 * call is 4); the validator and its error mapping recurse, so an unbounded depth overflows the stack.
 */
export const MAX_INPUT_DEPTH = 64;

const NUL = "\u0000";
// A surrogate half without its partner: not Unicode text; PostgreSQL would store U+FFFD or refuse it.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Node = { value: unknown; key: string | null; parent: Node | null; depth: number };

function pathOf(node: Node | null): string[] {
  const out: string[] = [];
  for (let n = node; n; n = n.parent) if (n.key !== null) out.push(n.key);
  return out.reverse();
}

function textProblem(s: string): string | null {
  if (s.includes(NUL)) return "contains a NUL character, which text may not hold";
  if (LONE_SURROGATE.test(s)) return "is not valid Unicode text (a lone surrogate)";
  return null;
}

/**
 * The first reason a parsed request part (body, query or path parameters) may not go further: nested
 * deeper than MAX_INPUT_DEPTH, or a string (value or key) PostgreSQL refuses in text. Iterative and
 * linear in the input, so it is safe on any input the body parser accepted.
 */
export function findUnboundedInput(value: unknown, root = "body"): { field: string; message: string } | null {
  const stack: Node[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === "string") {
      const why = textProblem(v);
      if (why) return { field: pathOf(node).join(".") || root, message: why };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (v instanceof Blob) {
      const name = (v as File).name;
      const why = typeof name === "string" ? textProblem(name) : null;
      if (why) return { field: pathOf(node).join(".") || root, message: `file name ${why}` };
      continue;
    }
    if (node.depth >= MAX_INPUT_DEPTH) {
      // Name the top-level field that goes too deep; the body itself when it is the container.
      const top = pathOf(node)[0];
      const field = top !== undefined && !Array.isArray(value) ? top : root;
      return { field, message: `nested more than ${MAX_INPUT_DEPTH} levels deep` };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], key: String(i), parent: node, depth: node.depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const why = textProblem(k);
      if (why) {
        const field = [...pathOf(node), k.replaceAll(NUL, "\\u0000")].join(".");
        return { field, message: `the key ${why}` };
      }
      stack.push({ value: (v as Record<string, unknown>)[k], key: k, parent: node, depth: node.depth + 1 });
    }
  }
  return null;
}

/** Throws 400 VALIDATION_ERROR naming the field when a parsed request part is not bounded text. */
export function assertBoundedInput(value: unknown, root = "body"): void {
  const problem = findUnboundedInput(value, root);
  if (problem) throw validationError(problem.field, problem.message);
}
