/** A setting that cannot be parsed: raised at boot, never inside a request. */
export class ConfigError extends Error {}
