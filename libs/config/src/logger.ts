import { describeError } from "./error_fields.ts";

/** Structured JSON logs on stderr; every line may carry a request or job id. */
export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
};

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;

/** Builds a logger that drops lines below `level`; lines go to stderr unless `sink` takes them. */
export function createLogger(
  level: keyof typeof LEVELS = "info",
  base: Record<string, unknown> = {},
  opts: { sink?: (line: string) => void } = {},
): Logger {
  const sink = opts.sink ?? ((line: string) => process.stderr.write(`${line}\n`));
  const min = LEVELS[level] ?? 20;
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const safe: Record<string, unknown> = {};
    // An Error logged as a field is described, never stringified: a failed query's message holds SQL.
    for (const [k, v] of Object.entries(fields ?? {}))
      safe[k] =
        v instanceof Error
          ? describeError(v, {
              withQuery: min <= LEVELS.debug,
              // Frames on errors (unexpected failures) and when debugging; warnings stay one short line.
              withStack: lvl === "error" || min <= LEVELS.debug,
            })
          : v;
    const entry = { t: new Date().toISOString(), level: lvl, msg, ...base, ...safe };
    let line: string;
    try {
      line = JSON.stringify(entry);
    } catch {
      // A field that cannot be serialized (a cycle, a BigInt) must not break the caller.
      line = JSON.stringify({ t: entry.t, level: lvl, msg, ...base, unserializable: Object.keys(safe) });
    }
    sink(line);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, opts),
  };
}
