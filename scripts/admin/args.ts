/** A mistake in the command line itself (exit 1, message on stderr). */
export class UsageError extends Error {}

/** Edit distance between two names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known name closest to `given`: the one with the smallest edit distance, or one that starts with
 * or contains it; null when nothing is near (more than a third of the name would change).
 */
export function nearest(given: string, known: readonly string[]): string | null {
  let best: { name: string; d: number } | null = null;
  for (const name of known) {
    const d = name.startsWith(given) || given.startsWith(name) ? 0.5 : distance(given, name);
    if (!best || d < best.d) best = { name, d };
  }
  if (!best) return null;
  return best.d <= Math.max(2, Math.ceil(given.length / 3)) ? best.name : null;
}

/** The `--flag` names a usage line mentions, in order: the flags a command accepts. */
export function flagsOf(usage: string): string[] {
  return [...new Set([...usage.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!))];
}

/**
 * Parses `--name value` and `--name=value` against the flags a command accepts. An unknown flag is an
 * error naming it and the nearest accepted one (`--credit` → `--credits`), never silently ignored.
 */
export function parseFlags(
  command: string,
  accepted: readonly string[],
  argv: string[],
): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new UsageError(`${command}: unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!accepted.includes(name)) {
      const near = nearest(name, accepted);
      const hint = near
        ? `; did you mean --${near}?`
        : accepted.length
          ? `; it takes ${accepted.map((f) => `--${f}`).join(", ")}`
          : "; it takes no flags";
      throw new UsageError(`${command}: unknown flag --${name}${hint}`);
    }
    if (name in flags) throw new UsageError(`${command}: --${name} given twice`);
    if (eq > 0) {
      flags[name] = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--"))
        throw new UsageError(`${command}: --${name} needs a value`);
      flags[name] = next;
      i++;
    }
  }
  return flags;
}
