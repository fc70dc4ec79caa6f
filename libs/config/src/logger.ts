/** Structured JSON logs on stderr; every line may carry a request or job id. */
export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
};

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;

/** Builds a logger that drops lines below `level`. */
export function createLogger(
  level: keyof typeof LEVELS = "info",
  base: Record<string, unknown> = {},
): Logger {
  const min = LEVELS[level] ?? 20;
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const line = JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...base, ...fields });
    process.stderr.write(`${line}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}
