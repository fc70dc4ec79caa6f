import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "./config_error.ts";
import { SETTINGS, type SettingDecl, type SettingKind, settingDecl } from "./settings.ts";

/**
 * The readers of the environment: each takes a declared setting's name and reads it as the table says
 * (kind, default, bounds), so that no default or bound is written twice. A name the table does not
 * declare, or a reader of the wrong kind, throws at once: a programming error the first test finds.
 */

/** The process environment, or a test's. */
export type Env = Record<string, string | undefined>;

function declared(name: string, kinds: SettingKind[]): SettingDecl {
  const decl = settingDecl(name);
  if (!kinds.includes(decl.kind))
    throw new Error(`${name} is declared as ${decl.kind}, read as ${kinds.join(" or ")}`);
  return decl;
}

/** The value as given (undefined when unset): for settings whose parser is their own. */
export function rawSetting(env: Env, name: string): string | undefined {
  settingDecl(name);
  return env[name];
}

/** The value, or the table's default when unset or empty. */
export function stringSetting(env: Env, name: string): string | null {
  const decl = declared(name, ["string"]);
  return env[name] || (decl.default as string | null);
}

function integer(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

/** An integer ≥ the declared minimum; the declared default when unset or empty. */
export function intSetting(env: Env, name: string): number {
  const decl = declared(name, ["int"]);
  if (typeof decl.default !== "number")
    throw new Error(`${name} has no numeric default: read it as optional`);
  const raw = env[name];
  if (raw === undefined || raw === "") return decl.default;
  return integer(name, raw, decl.min ?? 0);
}

/** An integer ≥ the declared minimum, or null when unset or empty (a setting whose default is none). */
export function optionalIntSetting(env: Env, name: string): number | null {
  const decl = declared(name, ["int"]);
  const raw = env[name];
  if (!raw) return null;
  return integer(name, raw, decl.min ?? 0);
}

/** 1/0, true/false, yes/no, on/off; the declared default when unset or empty. */
export function boolSetting(env: Env, name: string): boolean {
  const decl = declared(name, ["bool"]);
  const raw = env[name];
  if (raw === undefined || raw === "") return decl.default === true;
  if (["1", "true", "yes", "on"].includes(raw.toLowerCase())) return true;
  if (["0", "false", "no", "off"].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

/** A URL of one of the declared schemes, as given; null when unset. */
export function urlSetting(env: Env, name: string): string | null {
  const decl = declared(name, ["url"]);
  const raw = env[name];
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL: "${raw}"`);
  }
  const protocols = decl.protocols ?? [];
  if (!protocols.includes(url.protocol)) throw new ConfigError(`${name} must use ${protocols.join(" or ")}`);
  return raw;
}

/** Comma-separated entries, trimmed, empty ones dropped; the declared default when unset or empty. */
export function listSetting(env: Env, name: string): string[] {
  const decl = declared(name, ["list"]);
  return (env[name] || (decl.default as string | null) || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Comma-separated http(s) origins (scheme, host, port; no path), normalized. */
export function originsSetting(env: Env, name: string): string[] {
  declared(name, ["origins"]);
  const out: string[] = [];
  for (const raw of (env[name] || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(`${name}: "${raw}" is not an origin (like https://app.example.com)`);
    }
    if (!["http:", "https:"].includes(url.protocol) || url.pathname !== "/" || url.search || url.hash)
      throw new ConfigError(`${name}: "${raw}" is not an http(s) origin (scheme, host and port only)`);
    out.push(url.origin);
  }
  return out;
}

/** A path that must exist, made absolute; null when unset. */
export function fileSetting(env: Env, name: string): string | null {
  declared(name, ["file"]);
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  if (!existsSync(raw)) throw new ConfigError(`${name} names a file that does not exist: "${raw}"`);
  return resolve(raw);
}

/**
 * With NODE_ENV=production, refuses every setting the table marks `notInProduction` (development
 * switches and test hooks, decision 1521) that is on (a bool) or given (any other kind).
 */
export function refuseInProduction(env: Env): void {
  if (rawSetting(env, "NODE_ENV") !== "production") return;
  for (const decl of SETTINGS) {
    if (!decl.notInProduction) continue;
    const raw = env[decl.name]?.trim();
    const on =
      decl.kind === "bool"
        ? boolSetting(env, decl.name)
        : decl.kind === "list"
          ? listSetting(env, decl.name).length > 0
          : Boolean(raw);
    if (!on) continue;
    const shown = decl.kind === "bool" ? "1" : raw;
    throw new ConfigError(
      `${decl.name}=${shown} ${decl.notInProduction.why}: it is refused when NODE_ENV=production`,
    );
  }
}
