import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "./config_error.ts";
import { bounceAddressSetting, type DkimSettings, dkimSetting, heloNameSetting } from "./mail_settings.ts";
import {
  boolSetting,
  type Env,
  fileSetting,
  intSetting,
  listSetting,
  optionalIntSetting,
  originsSetting,
  rawSetting,
  refuseInProduction,
  stringSetting,
  urlSetting,
} from "./read_setting.ts";
import { DB_POOL_DEFAULTS, SOCIAL_PLATFORMS } from "./settings.ts";
import { type WebhookSettings, webhookSettings } from "./webhook_settings.ts";

export { DB_POOL_DEFAULTS };

/** Every setting of the service, parsed and checked at boot. */
export type Config = {
  port: number;
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  /**
   * DATABASE_POOLER: `transaction` when DATABASE_URL is a transaction-mode pooler (PgBouncer): no
   * startup parameters beyond the stock ones, no named prepared statements, timeouts per transaction
   * (SET LOCAL), advisory locks only within transactions; null: a direct connection (decision 1500).
   */
  databasePooler: "transaction" | null;
  /**
   * DATABASE_LISTEN_URL: the direct connection LISTEN uses (default DATABASE_URL; with
   * DATABASE_POOLER=transaction and none given, LISTEN is unavailable and the process polls).
   */
  databaseListenUrl: string | null;
  /** DATABASE_LISTEN_POLL_MS: how often a process without a working LISTEN looks for announced work. */
  databaseListenPollMs: number;
  redisUrl: string | null;
  secretKey: string;
  logLevel: "debug" | "info" | "warn" | "error";
  s3: {
    endpoint: string | null;
    /** S3_PUBLIC_ENDPOINT: the storage's address as clients outside the service network reach it. */
    publicEndpoint: string | null;
    bucket: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    forcePathStyle: boolean;
  } | null;
  chromiumPath: string | null;
  renderGpu: boolean;
  /** RENDER_HEADLESS_SHELL: films use Chromium's headless shell when one is installed beside it (1214). */
  renderHeadlessShell: boolean;
  renderConcurrency: number;
  /** Render queue: Redis key prefix, and the job lock after which a dead daemon's job is recovered. */
  queuePrefix: string;
  renderJobLockMs: number;
  /** Port of the render daemon's Prometheus /metrics listener; null: none. */
  renderMetricsPort: number | null;
  /** Renders of one organization in progress (queued or running) at once; the rest wait (0470). */
  renderOrgConcurrency: number;
  /** The whole film step of a render; a page still busy then is killed and the render fails (0471). */
  renderPageDeadlineMs: number;
  /** FFMPEG_PATH: the FFmpeg that encodes device clips; null finds `ffmpeg` on PATH (none: clips answer 501). */
  ffmpegPath: string | null;
  /** CLIP_CREDITS: the price of one device clip (default 30). */
  clipCredits: number;
  /** How often the sweeper checks that every render in progress still has its job (0472). */
  renderSweepEveryMs: number;
  /** Hosted sign-in browsers of one process, in all and per organization (0473). */
  loginBrowsers: { total: number; perOrg: number };
  limits: {
    dailyUploads: number;
    dailyFetchAttempts: number;
    importMaxRedirects: number;
    importMaxBytes: number;
    importTimeoutMs: number;
    orgStorageQuotaBytes: number;
    orgSiteLimit: number;
    /** SITE_DELETE_GRACE_S: how long a deleted site keeps its slug before it is purged (default 7 days). */
    siteDeleteGraceS: number;
    /**
     * MEDIA_MAX_PIXELS: an image whose header declares more pixels (width × height) is refused before
     * anything decodes it (default 40,000,000; CONTRACT.md "Bounded: retries, replays, images").
     */
    mediaMaxPixels: number;
  };
  /**
   * FETCH_ALLOW_HOSTS: `host:port` pairs exempt from the private-address guard, lowercased. A test hook:
   * refused at boot when NODE_ENV=production (decision 1521).
   */
  fetchAllowHosts: string[];
  /**
   * STORAGE_MIN_FREE_BYTES: the local-disk store refuses a write that would leave less free space than
   * this, and /readyz answers 503 naming storage below it (decision 0831). Not used with S3.
   */
  storageMinFreeBytes: number;
  /**
   * ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1: URL import and filming may reach loopback and private
   * addresses (this machine, its network). Development only: refused at boot when NODE_ENV=production.
   */
  allowLocalNetworkForDevelopment: boolean;
  /** OPERATOR_TOKEN: opens the queue dashboard (/admin/queues) to operators; null: no dashboard. */
  operatorToken: string | null;
  /** MCP_ALLOWED_ORIGINS: browser origins besides PUBLIC_BASE_URL's that may call /mcp. */
  mcpAllowedOrigins: string[];
  /** CORS_ORIGINS: browser origins that may call /api/v1 from their pages (CORS); none by default. */
  corsOrigins: string[];
  /** API_METRICS_PORT: the API's Prometheus GET /metrics listener (decision 0711); null: none. */
  apiMetricsPort: number | null;
  /** NODE_EXTRA_CA_CERTS: a PEM bundle of extra authorities, trusted by imports (Node) and Chromium. */
  extraCaFile: string | null;
  socialApiBase: Record<string, string | null>;
  /** Social publishing (issue 10): platform versions, waits, share tokens, media caps and OAuth clients. */
  social: {
    /** LINKEDIN_API_VERSION: the `LinkedIn-Version` header (YYYYMM). */
    linkedinVersion: string;
    /** SOCIAL_POLL_INTERVAL_MS / SOCIAL_POLL_MAX_ATTEMPTS: waiting for platform-side processing. */
    poll: { intervalMs: number; maxAttempts: number };
    /** SOCIAL_SHARE_TOKEN_SECONDS: how long a share URL minted for a platform at publish stays valid. */
    shareTokenSeconds: number;
    /** SOCIAL_PUBLISH_WAIT_S: how long POST /social/posts waits for its targets before answering. */
    publishWaitS: number;
    /** SOCIAL_PUBLISH_RETRY_WINDOW_S: how long a rate-limited target keeps trying before it fails. */
    publishRetryWindowS: number;
    /** SOCIAL_VIDEO_MAX_BYTES: the largest MP4 of the social media library. */
    videoMaxBytes: number;
    /** SOCIAL_AUTH_BASE_<PLATFORM>: the authorization host (authorize and token paths after it). */
    authBase: Record<string, string | null>;
    /** SOCIAL_<PLATFORM>_CLIENT_ID / _CLIENT_SECRET: the OAuth client of each platform; null: none. */
    clients: Record<string, { id: string; secret: string } | null>;
    /** SOCIAL_GRAPH_VERSION: the Instagram Graph API version (vNN.0); SOCIAL_THREADS_VERSION: Threads'. */
    graphVersion: string;
    threadsVersion: string;
    /** SOCIAL_LINKEDIN_RESTRICTED_SCOPES: restricted LinkedIn scopes the app was granted (r_member_social). */
    linkedinRestrictedScopes: string[];
    /** SOCIAL_LINKEDIN_REFRESH_TOKENS: the app is a LinkedIn partner that receives refresh tokens. */
    linkedinRefreshTokens: boolean;
    /** SOCIAL_TIKTOK_AUDITED: TikTok audited the app (public posts); unaudited apps post SELF_ONLY. */
    tiktokAudited: boolean;
    /**
     * SOCIAL_TIKTOK_READ_METRICS: connect asks for `video.list` and TikTok metrics are read through
     * /v2/video/query/; off (default): TikTok is the spec's "further platform", null metrics (decision 1032).
     */
    tiktokReadMetrics: boolean;
    /** SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: URL prefixes verified with TikTok for PULL_FROM_URL. */
    tiktokVerifiedUrlPrefixes: string[];
    /** SOCIAL_REDDIT_DEVELOPER: the Reddit user named in the User-Agent `(by /u/<name>)`. */
    redditDeveloper: string | null;
    /** SOCIAL_REDIRECT_ORIGINS: origins a connect `redirectUri` may be on (default PUBLIC_BASE_URL's). */
    redirectOrigins: string[];
  };
  /** AI image generation: an OpenAI-compatible images API; `apiBase` null: not configured (501). */
  image: { apiBase: string | null; apiKey: string | null; model: string; creditsPerImage: number };
  /** Bounds on waiting for a dependency, so that no request hangs (see decision 0800). */
  timeouts: {
    /** Connecting to PostgreSQL. */
    dbConnectMs: number;
    /** One SQL statement (server-side statement_timeout); 0: none. */
    dbStatementMs: number;
    /** One Redis command of a producer (enqueue, job state, rate limiter). */
    redisCommandMs: number;
    /** One request to S3. */
    storageMs: number;
    /** Each check of /readyz. */
    readyCheckMs: number;
    /** How long SIGTERM lets requests in flight finish before answering the rest 503. */
    shutdownGraceMs: number;
    /** The longest a signed PUT to the API may take; temporary files older than this are swept. */
    uploadTransferMs: number;
  };
  /** DB_POOL_MAX: connections per process in the PostgreSQL pool; null: the app's default (DB_POOL_DEFAULTS). */
  dbPoolMax: number | null;
  /** The Retry-After (seconds) of a 503 for a dependency that is down. */
  retryAfterSeconds: number;
  /** How long a verified API key is trusted in process (a revoke reaches every process at once); 0: off. */
  apiKeyCacheTtlMs: number;
  /** Requests per API key and window, shared through Redis when REDIS_URL is set; 0: no limit. */
  rateLimit: { requests: number; windowMs: number };
  /**
   * Idempotency-Key answers kept for replay (decision 1410): the largest one answer kept, and what one
   * organization's kept answers may weigh in a rolling day; a key whose answer is not kept still holds.
   */
  idempotency: { maxAnswerBytes: number; orgBytesPerDay: number };
  /** How often the media sweeper runs (settles uploads, removes temporary and orphaned files); 0: never. */
  mediaSweepEveryMs: number;
  /** How often the sweeper walks the store for orphaned objects, and how old an unclaimed object must be. */
  mediaOrphans: { everyMs: number; graceMs: number };
  /** Port of the metrics app's GET /healthz and /readyz; null: none. */
  metricsHealthPort: number | null;
  /** Newsletters: where mail goes and how fast (decisions 1100-1105). */
  newsletter: {
    /** SMTP_URL (smtp://user:pass@host:port, smtps://…); null: messages are written to DATA_DIR/outbox/. */
    smtpUrl: string | null;
    /** MAIL_FROM: the sender address (default newsletter@<host of PUBLIC_BASE_URL>). */
    mailFrom: string;
    /** SMTP_RATE_PER_MINUTE: messages per minute per sending process; 0: unthrottled. */
    ratePerMinute: number;
    /** NEWSLETTER_MEDIA_TOKEN_TTL_S: lifetime of the share tokens minted for images in a sent mail. */
    mediaTokenTtlSeconds: number;
    /** NEWSLETTER_LEASE_MS: how long a claimed recipient stays claimed before another process may take it. */
    leaseMs: number;
    /** NEWSLETTER_SWEEP_EVERY_MS: how often due campaigns start and stalled ones are taken up again. */
    sweepEveryMs: number;
    /** NEWSLETTER_CONCURRENCY: deliveries in flight per sending process (and SMTP connections). */
    concurrency: number;
    /** SMTP_TIMEOUT_MS: the most one SMTP step (connect, greeting, each reply) may take before the connection is dropped. */
    smtpTimeoutMs: number;
    /** NEWSLETTER_SOFT_BOUNCE_LIMIT: soft bounces (4.x.x, 5.2.2) of one address within 30 days that make it bounced. */
    softBounceLimit: number;
    /** NEWSLETTER_SNS_CERT_HOSTS: hosts an SNS message's SigningCertURL and SubscribeURL may name (`*`: one label). */
    snsCertHosts: string[];
    /** SMTP_HELO_NAME: the EHLO name (default the host of PUBLIC_BASE_URL; an IP as `[a.b.c.d]`; never localhost). */
    heloName: string;
    /** DKIM_DOMAIN, DKIM_SELECTOR, DKIM_PRIVATE_KEY_FILE: every mail is signed; null: unsigned. */
    dkim: DkimSettings | null;
    /** MAIL_BOUNCE_ADDRESS: the envelope sender, tagged per message (`local+<tag>@domain`); default MAIL_FROM. */
    bounceAddress: string;
    /** NEWSLETTER_MAIL_MEDIA_TTL_S: lifetime of a campaign mail's image links (revocable per campaign); default a year. */
    mailMediaTtlSeconds: number;
    /** NEWSLETTER_TEST_SENDS_PER_DAY: test mails an organization may send a day to addresses that are not its members. */
    testSendsPerDay: number;
  };
  /** Webhooks: retry schedule, timeout, caps (CONTRACT "Webhooks"; decisions 0840–0845). */
  webhooks: WebhookSettings;
};

export { ConfigError };

/** DATABASE_POOLER: `transaction` or unset/`none` (a direct connection). */
function poolerSetting(env: Env): "transaction" | null {
  const raw = rawSetting(env, "DATABASE_POOLER");
  if (raw === undefined || raw === "" || raw === "none") return null;
  if (raw === "transaction") return "transaction";
  throw new ConfigError(`DATABASE_POOLER must be "transaction" or "none", got "${raw}"`);
}

/** Reads SECRET_KEY, or the one generated into DATA_DIR on first start. */
function secretSetting(env: Env, dataDir: string): string {
  const given = rawSetting(env, "SECRET_KEY");
  if (given) {
    if (given.length < 16) throw new ConfigError("SECRET_KEY must be at least 16 characters");
    return given;
  }
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("hex");
  writeFileSync(file, key, { mode: 0o600, flag: "wx" });
  return readFileSync(file, "utf8").trim();
}

/** Parses the environment into one Config, throwing ConfigError with the setting's name. */
export function loadConfig(env: Env = process.env): Config {
  const port = intSetting(env, "PORT");
  const host = stringSetting(env, "HOST")!;
  const dataDir = resolve(stringSetting(env, "DATA_DIR")!);
  const logLevel = stringSetting(env, "LOG_LEVEL") as Config["logLevel"];
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, got "${logLevel}"`);
  }
  const s3Bucket = stringSetting(env, "S3_BUCKET");
  const s3 = s3Bucket
    ? {
        endpoint: urlSetting(env, "S3_ENDPOINT"),
        publicEndpoint: urlSetting(env, "S3_PUBLIC_ENDPOINT"),
        bucket: s3Bucket,
        region: stringSetting(env, "S3_REGION")!,
        accessKeyId: stringSetting(env, "S3_ACCESS_KEY_ID")!,
        secretAccessKey: stringSetting(env, "S3_SECRET_ACCESS_KEY")!,
        forcePathStyle: boolSetting(env, "S3_FORCE_PATH_STYLE"),
      }
    : null;
  const allowLocalNetworkForDevelopment = boolSetting(env, "ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT");
  // Development switches and test hooks (the table's notInProduction) refuse to load in production.
  refuseInProduction(env);
  const operatorToken = stringSetting(env, "OPERATOR_TOKEN");
  if (operatorToken !== null && operatorToken.length < 24)
    throw new ConfigError("OPERATOR_TOKEN must be at least 24 characters (it opens the queue dashboard)");
  const socialApiBase: Record<string, string | null> = {};
  for (const p of SOCIAL_PLATFORMS) socialApiBase[p] = urlSetting(env, `SOCIAL_API_BASE_${p.toUpperCase()}`);
  const publicBaseUrl = (
    stringSetting(env, "PUBLIC_BASE_URL") ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`
  ).replace(/\/$/, "");
  const authBase: Record<string, string | null> = {};
  const clients: Record<string, { id: string; secret: string } | null> = {};
  for (const p of SOCIAL_PLATFORMS) {
    const P = p.toUpperCase();
    authBase[p] = urlSetting(env, `SOCIAL_AUTH_BASE_${P}`);
    const id = stringSetting(env, `SOCIAL_${P}_CLIENT_ID`);
    clients[p] = id ? { id, secret: stringSetting(env, `SOCIAL_${P}_CLIENT_SECRET`)! } : null;
  }
  const linkedinVersion = stringSetting(env, "LINKEDIN_API_VERSION")!;
  if (!/^\d{6}(\.\d{2})?$/.test(linkedinVersion))
    throw new ConfigError("LINKEDIN_API_VERSION must be a LinkedIn version, YYYYMM (e.g. 202607)");
  return {
    port,
    host,
    publicBaseUrl,
    dataDir,
    databaseUrl: urlSetting(env, "DATABASE_URL"),
    databasePooler: poolerSetting(env),
    databaseListenUrl: urlSetting(env, "DATABASE_LISTEN_URL"),
    databaseListenPollMs: intSetting(env, "DATABASE_LISTEN_POLL_MS"),
    redisUrl: urlSetting(env, "REDIS_URL"),
    secretKey: secretSetting(env, dataDir),
    logLevel,
    s3,
    chromiumPath: stringSetting(env, "CHROMIUM_PATH"),
    renderGpu: boolSetting(env, "RENDER_GPU"),
    renderHeadlessShell: boolSetting(env, "RENDER_HEADLESS_SHELL"),
    renderConcurrency: intSetting(env, "RENDER_CONCURRENCY"),
    queuePrefix: stringSetting(env, "QUEUE_PREFIX")!,
    renderJobLockMs: intSetting(env, "RENDER_JOB_LOCK_MS"),
    renderMetricsPort: optionalIntSetting(env, "RENDER_METRICS_PORT"),
    renderOrgConcurrency: intSetting(env, "RENDER_ORG_CONCURRENCY"),
    renderPageDeadlineMs: intSetting(env, "RENDER_PAGE_DEADLINE_MS"),
    ffmpegPath: stringSetting(env, "FFMPEG_PATH"),
    clipCredits: intSetting(env, "CLIP_CREDITS"),
    renderSweepEveryMs: intSetting(env, "RENDER_SWEEP_EVERY_MS"),
    loginBrowsers: {
      total: intSetting(env, "LOGIN_BROWSERS_MAX"),
      perOrg: intSetting(env, "LOGIN_BROWSERS_PER_ORG"),
    },
    limits: {
      dailyUploads: intSetting(env, "MEDIA_DAILY_UPLOAD_LIMIT"),
      dailyFetchAttempts: intSetting(env, "MEDIA_DAILY_FETCH_ATTEMPT_LIMIT"),
      importMaxRedirects: intSetting(env, "IMPORT_MAX_REDIRECTS"),
      importMaxBytes: intSetting(env, "IMPORT_MAX_BYTES"),
      importTimeoutMs: intSetting(env, "IMPORT_TIMEOUT_MS"),
      orgStorageQuotaBytes: intSetting(env, "ORG_STORAGE_QUOTA_BYTES"),
      orgSiteLimit: intSetting(env, "ORG_SITE_LIMIT"),
      siteDeleteGraceS: intSetting(env, "SITE_DELETE_GRACE_S"),
      mediaMaxPixels: intSetting(env, "MEDIA_MAX_PIXELS"),
    },
    fetchAllowHosts: listSetting(env, "FETCH_ALLOW_HOSTS").map((h) => h.toLowerCase()),
    allowLocalNetworkForDevelopment,
    operatorToken,
    mcpAllowedOrigins: originsSetting(env, "MCP_ALLOWED_ORIGINS"),
    corsOrigins: originsSetting(env, "CORS_ORIGINS"),
    apiMetricsPort: optionalIntSetting(env, "API_METRICS_PORT"),
    extraCaFile: fileSetting(env, "NODE_EXTRA_CA_CERTS"),
    socialApiBase,
    social: {
      linkedinVersion,
      poll: {
        intervalMs: intSetting(env, "SOCIAL_POLL_INTERVAL_MS"),
        maxAttempts: intSetting(env, "SOCIAL_POLL_MAX_ATTEMPTS"),
      },
      shareTokenSeconds: intSetting(env, "SOCIAL_SHARE_TOKEN_SECONDS"),
      publishWaitS: intSetting(env, "SOCIAL_PUBLISH_WAIT_S"),
      publishRetryWindowS: intSetting(env, "SOCIAL_PUBLISH_RETRY_WINDOW_S"),
      videoMaxBytes: intSetting(env, "SOCIAL_VIDEO_MAX_BYTES"),
      ...socialProviderSettings(env, publicBaseUrl),
      authBase,
      clients,
    },
    image: {
      apiBase: urlSetting(env, "IMAGE_API_BASE"),
      apiKey: stringSetting(env, "IMAGE_API_KEY"),
      model: stringSetting(env, "IMAGE_MODEL")!,
      creditsPerImage: intSetting(env, "IMAGE_CREDITS_PER_IMAGE"),
    },
    timeouts: {
      dbConnectMs: intSetting(env, "DB_CONNECT_TIMEOUT_MS"),
      dbStatementMs: intSetting(env, "DB_STATEMENT_TIMEOUT_MS"),
      redisCommandMs: intSetting(env, "REDIS_COMMAND_TIMEOUT_MS"),
      storageMs: intSetting(env, "STORAGE_TIMEOUT_MS"),
      readyCheckMs: intSetting(env, "READY_CHECK_TIMEOUT_MS"),
      shutdownGraceMs: intSetting(env, "SHUTDOWN_GRACE_MS"),
      uploadTransferMs: intSetting(env, "UPLOAD_TRANSFER_TIMEOUT_MS"),
    },
    dbPoolMax: optionalIntSetting(env, "DB_POOL_MAX"),
    retryAfterSeconds: intSetting(env, "RETRY_AFTER_SECONDS"),
    storageMinFreeBytes: intSetting(env, "STORAGE_MIN_FREE_BYTES"),
    apiKeyCacheTtlMs: intSetting(env, "API_KEY_CACHE_TTL_MS"),
    rateLimit: {
      requests: intSetting(env, "RATE_LIMIT_REQUESTS"),
      windowMs: intSetting(env, "RATE_LIMIT_WINDOW_MS"),
    },
    idempotency: {
      maxAnswerBytes: intSetting(env, "IDEMPOTENCY_MAX_ANSWER_BYTES"),
      orgBytesPerDay: intSetting(env, "IDEMPOTENCY_ORG_BYTES"),
    },
    mediaSweepEveryMs: intSetting(env, "MEDIA_SWEEP_EVERY_MS"),
    mediaOrphans: {
      everyMs: intSetting(env, "MEDIA_ORPHAN_SWEEP_EVERY_MS"),
      graceMs: intSetting(env, "MEDIA_ORPHAN_GRACE_MS"),
    },
    metricsHealthPort: optionalIntSetting(env, "METRICS_HEALTH_PORT"),
    newsletter: {
      smtpUrl: urlSetting(env, "SMTP_URL"),
      mailFrom: mailFromSetting(env, publicBaseUrl),
      ratePerMinute: intSetting(env, "SMTP_RATE_PER_MINUTE"),
      mediaTokenTtlSeconds: intSetting(env, "NEWSLETTER_MEDIA_TOKEN_TTL_S"),
      leaseMs: intSetting(env, "NEWSLETTER_LEASE_MS"),
      sweepEveryMs: intSetting(env, "NEWSLETTER_SWEEP_EVERY_MS"),
      concurrency: intSetting(env, "NEWSLETTER_CONCURRENCY"),
      smtpTimeoutMs: intSetting(env, "SMTP_TIMEOUT_MS"),
      softBounceLimit: intSetting(env, "NEWSLETTER_SOFT_BOUNCE_LIMIT"),
      snsCertHosts: listSetting(env, "NEWSLETTER_SNS_CERT_HOSTS"),
      heloName: heloNameSetting(env, publicBaseUrl),
      dkim: dkimSetting(env),
      bounceAddress: bounceAddressSetting(env, mailFromSetting(env, publicBaseUrl)),
      mailMediaTtlSeconds: intSetting(env, "NEWSLETTER_MAIL_MEDIA_TTL_S"),
      testSendsPerDay: intSetting(env, "NEWSLETTER_TEST_SENDS_PER_DAY"),
    },
    webhooks: webhookSettings(env),
  };
}

/** The social settings that follow what each provider grants the app (issue 24, decisions 1010–1016). */
function socialProviderSettings(env: Env, publicBaseUrl: string) {
  const graphVersion = stringSetting(env, "SOCIAL_GRAPH_VERSION")!;
  if (!/^v\d+\.\d+$/.test(graphVersion))
    throw new ConfigError("SOCIAL_GRAPH_VERSION must be a Graph API version like v25.0");
  const threadsVersion = stringSetting(env, "SOCIAL_THREADS_VERSION")!;
  if (!/^v\d+\.\d+$/.test(threadsVersion))
    throw new ConfigError("SOCIAL_THREADS_VERSION must be a Threads API version like v1.0");
  const prefixes = listSetting(env, "SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES");
  for (const p of prefixes)
    if (!/^https?:\/\/[^/]+\//.test(p))
      throw new ConfigError(
        `SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "${p}" is not a URL prefix (https://host/path/)`,
      );
  const developer = stringSetting(env, "SOCIAL_REDDIT_DEVELOPER")?.replace(/^\/?u\//, "") || null;
  if (developer && !/^[\w-]{3,20}$/.test(developer))
    throw new ConfigError("SOCIAL_REDDIT_DEVELOPER must be a Reddit user name");
  const redirectOrigins = originsSetting(env, "SOCIAL_REDIRECT_ORIGINS");
  return {
    graphVersion,
    threadsVersion,
    linkedinRestrictedScopes: listSetting(env, "SOCIAL_LINKEDIN_RESTRICTED_SCOPES"),
    linkedinRefreshTokens: boolSetting(env, "SOCIAL_LINKEDIN_REFRESH_TOKENS"),
    tiktokAudited: boolSetting(env, "SOCIAL_TIKTOK_AUDITED"),
    tiktokReadMetrics: boolSetting(env, "SOCIAL_TIKTOK_READ_METRICS"),
    tiktokVerifiedUrlPrefixes: prefixes,
    redditDeveloper: developer,
    redirectOrigins: redirectOrigins.length > 0 ? redirectOrigins : [new URL(publicBaseUrl).origin],
  };
}

/** MAIL_FROM, or newsletter@<host of PUBLIC_BASE_URL>; a bare address either way. */
function mailFromSetting(env: Env, publicBaseUrl: string): string {
  const raw = rawSetting(env, "MAIL_FROM")?.trim();
  if (raw) {
    if (!/^[^\s@<>"]+@[^\s@<>"]+$/.test(raw))
      throw new ConfigError(`MAIL_FROM must be an address like news@example.com, got "${raw}"`);
    return raw;
  }
  const host = new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, "");
  // An IP literal or a dotless name is no mail domain: say localhost.
  const isName = host.includes(".") && !/^[\d.]+$/.test(host) && !host.includes(":");
  return `newsletter@${isName ? host : "localhost"}`;
}
