/** Typed configuration read once from the environment, with the embedded defaults. */
export { type Config, ConfigError, loadConfig } from "./src/config.ts";
export { type Clock, systemClock, fixedClock } from "./src/clock.ts";
export { type Logger, createLogger } from "./src/logger.ts";
