import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";

/** Every setting of the service, parsed and checked at boot. */
export type Config = {
  port: number;
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  secretKey: string;
  logLevel: "debug" | "info" | "warn" | "error";
  s3: {
    endpoint: string | null;
    bucket: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    forcePathStyle: boolean;
  } | null;
  chromiumPath: string | null;
  renderGpu: boolean;
  renderConcurrency: number;
  /** Render queue: Redis key prefix, and the job lock after which a dead daemon's job is recovered. */
  queuePrefix: string;
  renderJobLockMs: number;
  /** Port of the render daemon's Prometheus /metrics listener; null: none. */
  renderMetricsPort: number | null;
  limits: {
    dailyUploads: number;
    dailyFetchAttempts: number;
    importMaxRedirects: number;
    importMaxBytes: number;
    importTimeoutMs: number;
    orgStorageQuotaBytes: number;
    orgSiteLimit: number;
  };
  fetchAllowHosts: string[];
  socialApiBase: Record<string, string | null>;
};

/** A setting that cannot be parsed: raised at boot, never inside a request. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function intSetting(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw.toLowerCase())) return true;
  if (["0", "false", "no", "off"].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function urlSetting(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL: "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) throw new ConfigError(`${name} must use ${protocols.join(" or ")}`);
  return raw;
}

/** Reads SECRET_KEY, or the one generated into DATA_DIR on first start. */
function secretSetting(env: Env, dataDir: string): string {
  if (env.SECRET_KEY) {
    if (env.SECRET_KEY.length < 16) throw new ConfigError("SECRET_KEY must be at least 16 characters");
    return env.SECRET_KEY;
  }
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("hex");
  writeFileSync(file, key, { mode: 0o600, flag: "wx" });
  return readFileSync(file, "utf8").trim();
}

const PLATFORMS = ["instagram", "threads", "x", "linkedin", "reddit", "tiktok"] as const;

/** Parses the environment into one Config, throwing ConfigError with the setting's name. */
export function loadConfig(env: Env = process.env): Config {
  const port = intSetting(env, "PORT", 3000, 0);
  const host = env.HOST || "127.0.0.1";
  const dataDir = resolve(env.DATA_DIR || "./.data");
  const logLevel = (env.LOG_LEVEL || "info") as Config["logLevel"];
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, got "${logLevel}"`);
  }
  const s3Bucket = env.S3_BUCKET;
  const s3 = s3Bucket
    ? {
        endpoint: urlSetting(env, "S3_ENDPOINT", ["http:", "https:"]),
        bucket: s3Bucket,
        region: env.S3_REGION || "us-east-1",
        accessKeyId: env.S3_ACCESS_KEY_ID || "",
        secretAccessKey: env.S3_SECRET_ACCESS_KEY || "",
        forcePathStyle: boolSetting(env, "S3_FORCE_PATH_STYLE", false),
      }
    : null;
  const socialApiBase: Record<string, string | null> = {};
  for (const p of PLATFORMS)
    socialApiBase[p] = urlSetting(env, `SOCIAL_API_BASE_${p.toUpperCase()}`, ["http:", "https:"]);
  return {
    port,
    host,
    publicBaseUrl: (
      env.PUBLIC_BASE_URL || `http://${host.includes(":") ? `[${host}]` : host}:${port}`
    ).replace(/\/$/, ""),
    dataDir,
    databaseUrl: urlSetting(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    redisUrl: urlSetting(env, "REDIS_URL", ["redis:", "rediss:"]),
    secretKey: secretSetting(env, dataDir),
    logLevel,
    s3,
    chromiumPath: env.CHROMIUM_PATH || null,
    renderGpu: boolSetting(env, "RENDER_GPU", false),
    renderConcurrency: intSetting(env, "RENDER_CONCURRENCY", 2, 1),
    queuePrefix: env.QUEUE_PREFIX || "site",
    renderJobLockMs: intSetting(env, "RENDER_JOB_LOCK_MS", 30_000, 500),
    renderMetricsPort: env.RENDER_METRICS_PORT ? intSetting(env, "RENDER_METRICS_PORT", 0, 0) : null,
    limits: {
      dailyUploads: intSetting(env, "MEDIA_DAILY_UPLOAD_LIMIT", 200),
      dailyFetchAttempts: intSetting(env, "MEDIA_DAILY_FETCH_ATTEMPT_LIMIT", 50),
      importMaxRedirects: intSetting(env, "IMPORT_MAX_REDIRECTS", 3),
      importMaxBytes: intSetting(env, "IMPORT_MAX_BYTES", 10485760, 1),
      importTimeoutMs: intSetting(env, "IMPORT_TIMEOUT_MS", 15000, 1),
      orgStorageQuotaBytes: intSetting(env, "ORG_STORAGE_QUOTA_BYTES", 5 * 1024 * 1024 * 1024),
      orgSiteLimit: intSetting(env, "ORG_SITE_LIMIT", 25),
    },
    fetchAllowHosts: (env.FETCH_ALLOW_HOSTS || "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    socialApiBase,
  };
}
