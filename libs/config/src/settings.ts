/**
 * Every setting of the service, declared once (issue 37, decision 1520): its name, kind, default and
 * bounds, whether it is a secret, whether production refuses it, one line of doc, and which apps read it.
 * The parser (config.ts and its helpers) reads the environment only through this table; `.env.example`
 * and the README's settings tables are written from it by `bun scripts/settings_docs.ts` and checked by
 * scripts/checks/env_example_test.ts; scripts/checks/settings_read_test.ts fails on a setting read that
 * the table does not declare.
 */

/** The platform identifiers of the contract, one per kind of the spec's metrics table (decision 1522). */
export const SOCIAL_PLATFORMS = ["instagram", "threads", "x", "linkedin", "reddit", "tiktok"] as const;
/** A platform identifier. */
export type SocialPlatform = (typeof SOCIAL_PLATFORMS)[number];

/**
 * DB_POOL_MAX when unset, per app (decision 1502): the API serves many requests at once; a render host
 * spends its time in Chromium and a few bookkeeping statements per render, the metrics app in one
 * collector pass at a time.
 */
export const DB_POOL_DEFAULTS = { api: 10, "render-daemon": 4, metrics: 4 } as const;

/** The default retry schedule, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** The processes that read a setting: the three apps and the operator CLI (`bun run admin`). */
export type SettingApp = "api" | "render-daemon" | "metrics" | "cli";

/**
 * How a value is read: `int` (an integer ≥ `min`), `bool` (1/0, true/false, yes/no, on/off), `string`,
 * `url` (one of `protocols`), `origins` (comma-separated http(s) origins), `list` (comma-separated),
 * `file` (a path that must exist).
 */
export type SettingKind = "int" | "bool" | "string" | "url" | "origins" | "list" | "file";

/** Where a setting is listed in `.env.example` and which README table shows it. */
export type SettingSection =
  | "HTTP"
  | "State"
  | "Production backends"
  | "Rendering"
  | "Operators"
  | "Limits the spec leaves open"
  | "Faults, health and load"
  | "Newsletters"
  | "Social platforms"
  | "AI image generation"
  | "Development"
  | "Test hooks"
  | "Webhooks";

/** One setting. */
export type SettingDecl = {
  name: string;
  kind: SettingKind;
  /** The value when unset or empty; null: none (the parser says what none means). */
  default: number | boolean | string | null;
  /** The default in words where it is derived from other settings or the machine (README, .env.example). */
  defaultText?: string;
  /** `int`: the smallest value accepted. */
  min?: number;
  /** `url`: the accepted schemes, as URL.protocol spells them (`https:`). */
  protocols?: string[];
  /** A value to show in `.env.example` where the default is none. */
  example?: string;
  /** Holds a credential (or may: a URL with a password): `.env.example` shows at most a placeholder. */
  secret?: boolean;
  /**
   * Refused at boot when NODE_ENV=production, with the reason as the error says it: a development
   * switch or a test hook (decision 1521). A bool is refused when on, any other kind when given.
   */
  notInProduction?: { kind: "development" | "test hook"; why: string };
  /** One line: what the setting does (README, `.env.example`). */
  doc: string;
  apps: SettingApp[];
  section: SettingSection;
  /** Per-platform settings share one README row: `SOCIAL_API_BASE_<PLATFORM>`. */
  family?: string;
};

const ALL: SettingApp[] = ["api", "render-daemon", "metrics"];
const ALL_AND_CLI: SettingApp[] = ["api", "render-daemon", "metrics", "cli"];
const API: SettingApp[] = ["api"];
const RENDERS: SettingApp[] = ["api", "render-daemon"];
const DAEMON: SettingApp[] = ["render-daemon"];
const SENDERS: SettingApp[] = ["api", "render-daemon"];
const SOCIAL: SettingApp[] = ["api", "render-daemon", "metrics"];
const HTTP_S = ["http:", "https:"];
const POSTGRES = ["postgres:", "postgresql:"];

function platformFamily(
  family: string,
  nameOf: (upper: string) => string,
  decl: Omit<SettingDecl, "name" | "family">,
): SettingDecl[] {
  return SOCIAL_PLATFORMS.map((p) => ({ ...decl, name: nameOf(p.toUpperCase()), family }));
}

/** The declarations, in the order `.env.example` lists them. */
// biome-ignore format: one setting a line, a table to read down
export const SETTINGS: readonly SettingDecl[] = [
  // --- HTTP ---
  { name: "PORT", kind: "int", default: 3000, min: 0, doc: "where the API listens (its port)", apps: ["api", "cli"], section: "HTTP" },
  { name: "HOST", kind: "string", default: "127.0.0.1", doc: "where the API listens (its address)", apps: ["api", "cli"], section: "HTTP" },
  { name: "PUBLIC_BASE_URL", kind: "string", default: null, defaultText: "`http://HOST:PORT`", example: "http://127.0.0.1:3000", doc: "base address clients see, used in signed URLs, links and mail; other processes without one take the API's recorded one", apps: ALL_AND_CLI, section: "HTTP" },
  { name: "LOG_LEVEL", kind: "string", default: "info", doc: "debug | info | warn | error: JSON log lines on stderr, each with its request or job id; no SQL below `debug` (0011)", apps: ALL_AND_CLI, section: "HTTP" },
  { name: "NODE_ENV", kind: "string", default: null, example: "production", doc: "`production` in the images: refuses the development switches and test hooks (ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT, FETCH_ALLOW_HOSTS)", apps: ALL_AND_CLI, section: "HTTP" },
  { name: "MCP_ALLOWED_ORIGINS", kind: "origins", default: null, example: "https://app.example.com,http://127.0.0.1:5173", doc: "browser origins besides `PUBLIC_BASE_URL`'s that may call `/mcp` (comma-separated scheme://host[:port]); any other Origin gets 403, clients sending none pass", apps: API, section: "HTTP" },
  { name: "CORS_ORIGINS", kind: "origins", default: null, example: "https://app.example.com", doc: "browser origins whose pages may call `/api/v1` (comma-separated): they get `Access-Control-Allow-Origin` and answered preflights; others get no CORS headers (0712)", apps: API, section: "HTTP" },
  { name: "API_METRICS_PORT", kind: "int", default: null, min: 0, defaultText: "none (9465 in the image)", example: "9465", doc: "the API's Prometheus `GET /metrics` on its own port: requests by route template and status, latency, DB pool, event-loop lag, CPU, memory (0711)", apps: API, section: "HTTP" },
  // --- State ---
  { name: "DATA_DIR", kind: "string", default: "./.data", doc: "embedded PostgreSQL (its credentials in `pg-secrets.json`, 0600; the service connects as a role that owns only its database, 0012), local objects, generated secret", apps: ALL_AND_CLI, section: "State" },
  { name: "SECRET_KEY", kind: "string", default: null, defaultText: "generated into `DATA_DIR`", secret: true, doc: "signs grants and upload URLs; encrypts stored browser sessions and social tokens (at least 16 characters; the same on every process)", apps: ALL_AND_CLI, section: "State" },
  // --- Production backends ---
  { name: "DATABASE_URL", kind: "url", default: null, protocols: POSTGRES, defaultText: "embedded PostgreSQL", example: "postgres://user:pass@db:5432/site", secret: true, doc: "`postgres://…` for production (it may hold a password)", apps: ALL_AND_CLI, section: "Production backends" },
  { name: "DATABASE_POOLER", kind: "string", default: "none", doc: "`transaction`: `DATABASE_URL` is a transaction-mode pooler (PgBouncer): no startup parameters beyond PgBouncer's stock ones, timeouts per transaction (`SET LOCAL`), no named prepared statements, advisory locks only within transactions (1500)", apps: ALL_AND_CLI, section: "Production backends" },
  { name: "DATABASE_LISTEN_URL", kind: "url", default: null, protocols: POSTGRES, defaultText: "`DATABASE_URL` (none with `DATABASE_POOLER=transaction`)", secret: true, doc: "the direct connection `LISTEN` uses (webhook wake-ups, API key revocations); without a working one a process polls and says so at start (1501)", apps: ALL, section: "Production backends" },
  { name: "DATABASE_LISTEN_POLL_MS", kind: "int", default: 1000, min: 50, doc: "how often a process without a working `LISTEN` looks for webhook deliveries (its API key cache is off meanwhile)", apps: ALL, section: "Production backends" },
  { name: "REDIS_URL", kind: "url", default: null, protocols: ["redis:", "rediss:"], defaultText: "in-process queue", example: "redis://redis:6379", secret: true, doc: "BullMQ render queue and metrics schedule; any number of daemons (it may hold a password)", apps: ALL, section: "Production backends" },
  { name: "S3_ENDPOINT", kind: "url", default: null, protocols: HTTP_S, defaultText: "local disk (with `S3_BUCKET` unset)", example: "http://minio:9000", doc: "object storage (presigned S3 PUT); read only when `S3_BUCKET` is set", apps: ALL, section: "Production backends" },
  { name: "S3_BUCKET", kind: "string", default: null, defaultText: "none: local disk", example: "site-media", doc: "the bucket; set, objects live in S3 instead of `DATA_DIR/objects`", apps: ALL, section: "Production backends" },
  { name: "S3_REGION", kind: "string", default: "us-east-1", doc: "the bucket's region", apps: ALL, section: "Production backends" },
  { name: "S3_ACCESS_KEY_ID", kind: "string", default: "", doc: "the access key of the storage account", apps: ALL, section: "Production backends" },
  { name: "S3_SECRET_ACCESS_KEY", kind: "string", default: "", secret: true, doc: "the secret of that access key", apps: ALL, section: "Production backends" },
  { name: "S3_FORCE_PATH_STYLE", kind: "bool", default: false, example: "true", doc: "path-style bucket addresses (MinIO and most S3-compatible stores)", apps: ALL, section: "Production backends" },
  { name: "S3_PUBLIC_ENDPOINT", kind: "url", default: null, protocols: HTTP_S, defaultText: "`S3_ENDPOINT`", example: "https://media.example.com", doc: "the storage's address as clients outside the service network reach it: presigned upload URLs name it", apps: ALL, section: "Production backends" },
  // --- Rendering ---
  { name: "CHROMIUM_PATH", kind: "string", default: null, defaultText: "`/usr/bin/chromium`, `chromium` or `google-chrome` on PATH", example: "/usr/bin/chromium", doc: "the Chromium that films pages and hosts sign-in browsers; none found: screenshots answer 501", apps: RENDERS, section: "Rendering" },
  { name: "FFMPEG_PATH", kind: "string", default: null, defaultText: "`ffmpeg` on PATH (the bootstrap installs it through apt where root)", example: "/usr/bin/ffmpeg", doc: "the FFmpeg that encodes device clips; none found: clip requests answer 501", apps: RENDERS, section: "Rendering" },
  { name: "CLIP_CREDITS", kind: "int", default: 30, min: 1, doc: "the price of one device clip", apps: RENDERS, section: "Rendering" },
  { name: "RENDER_GPU", kind: "bool", default: false, doc: "1 asks Chromium for the GPU (render hosts with one)", apps: DAEMON, section: "Rendering" },
  { name: "RENDER_HEADLESS_SHELL", kind: "bool", default: true, doc: "on a CPU host, film with Chromium's headless shell when one is installed beside it (`chromium-headless-shell`; a third less CPU per page, decision 1214); `0`: Chromium itself", apps: DAEMON, section: "Rendering" },
  { name: "RENDER_CONCURRENCY", kind: "int", default: 2, min: 1, doc: "pages filmed at once per daemon (about 1 GiB of memory each on CPU)", apps: DAEMON, section: "Rendering" },
  { name: "QUEUE_PREFIX", kind: "string", default: "site", doc: "Redis key prefix of the BullMQ queues, the same on every host (KEDA reads `<prefix>:renders:wait`)", apps: ALL, section: "Rendering" },
  { name: "RENDER_JOB_LOCK_MS", kind: "int", default: 30_000, min: 500, doc: "a job whose daemon died is handed to another after this lock lapses", apps: ALL, section: "Rendering" },
  { name: "RENDER_METRICS_PORT", kind: "int", default: null, min: 0, defaultText: "none (9464 in the images)", example: "9464", doc: "the daemon's Prometheus `GET /metrics`, `/healthz` and `/readyz`; unset: no listener", apps: DAEMON, section: "Rendering" },
  // --- Operators ---
  { name: "OPERATOR_TOKEN", kind: "string", default: null, secret: true, doc: "opens the queue dashboard at `/admin/queues` (`Authorization: Bearer <token>`, or `?token=` once in a browser; with `REDIS_URL`; at least 24 characters); unset: no dashboard", apps: API, section: "Operators" },
  { name: "RENDER_ORG_CONCURRENCY", kind: "int", default: 2, min: 1, doc: "renders of one organization in progress at once, all daemons together; the rest wait (0470; the same on API and daemons)", apps: RENDERS, section: "Operators" },
  { name: "RENDER_PAGE_DEADLINE_MS", kind: "int", default: 20_000, min: 1000, doc: "the whole film step of a render; a page still busy is killed and the render fails, refunded (0471)", apps: RENDERS, section: "Operators" },
  { name: "RENDER_SWEEP_EVERY_MS", kind: "int", default: 5000, min: 100, doc: "how often each daemon checks that every render in progress still has its job (0472)", apps: DAEMON, section: "Operators" },
  { name: "LOGIN_BROWSERS_MAX", kind: "int", default: 4, min: 1, doc: "hosted sign-in browsers per API process (0473)", apps: API, section: "Operators" },
  { name: "LOGIN_BROWSERS_PER_ORG", kind: "int", default: 1, min: 1, doc: "of those, how many one organization may hold (0473)", apps: API, section: "Operators" },
  { name: "NODE_EXTRA_CA_CERTS", kind: "file", default: null, example: "/etc/ssl/company-ca.pem", doc: "a PEM bundle of extra certificate authorities trusted by URL imports (Node reads it at start) and Chromium (an NSS database per profile; needs `certutil` from `libnss3-tools`, decision 1211)", apps: RENDERS, section: "Operators" },
  // --- Limits the spec leaves open ---
  { name: "MEDIA_DAILY_UPLOAD_LIMIT", kind: "int", default: 200, min: 0, doc: "uploads per site per rolling day", apps: API, section: "Limits the spec leaves open" },
  { name: "MEDIA_DAILY_FETCH_ATTEMPT_LIMIT", kind: "int", default: 50, min: 0, doc: "failed URL-import fetches per site per rolling day", apps: API, section: "Limits the spec leaves open" },
  { name: "MEDIA_MAX_PIXELS", kind: "int", default: 40_000_000, min: 1, doc: "width × height an image's header may declare; a larger one (or one declaring no size) is refused before anything decodes it (decision 1430)", apps: SOCIAL, section: "Limits the spec leaves open" },
  { name: "IMPORT_MAX_REDIRECTS", kind: "int", default: 3, min: 0, doc: "redirects a URL import follows", apps: API, section: "Limits the spec leaves open" },
  { name: "IMPORT_MAX_BYTES", kind: "int", default: 10_485_760, min: 1, doc: "the largest file a URL import fetches", apps: API, section: "Limits the spec leaves open" },
  { name: "IMPORT_TIMEOUT_MS", kind: "int", default: 15_000, min: 1, doc: "a URL import's deadline", apps: API, section: "Limits the spec leaves open" },
  { name: "ORG_STORAGE_QUOTA_BYTES", kind: "int", default: 5 * 1024 * 1024 * 1024, min: 0, doc: "storage quota of new organizations (5 GiB)", apps: ["api", "cli"], section: "Limits the spec leaves open" },
  { name: "ORG_SITE_LIMIT", kind: "int", default: 25, min: 0, doc: "site limit of new organizations", apps: ["api", "cli"], section: "Limits the spec leaves open" },
  { name: "SITE_DELETE_GRACE_S", kind: "int", default: 7 * 24 * 3600, min: 0, doc: "a deleted site keeps its slug this long (7 days), then it is purged (decision 0730)", apps: API, section: "Limits the spec leaves open" },
  // --- Faults, health and load ---
  { name: "DB_CONNECT_TIMEOUT_MS", kind: "int", default: 3000, min: 100, doc: "connecting to PostgreSQL; past it the request answers 503", apps: ALL_AND_CLI, section: "Faults, health and load" },
  { name: "DB_STATEMENT_TIMEOUT_MS", kind: "int", default: 15_000, min: 0, doc: "one SQL statement (server-side statement_timeout); 0: none", apps: ALL_AND_CLI, section: "Faults, health and load" },
  { name: "DB_POOL_MAX", kind: "int", default: null, min: 1, defaultText: `API ${DB_POOL_DEFAULTS.api}; render daemon and metrics app ${DB_POOL_DEFAULTS["render-daemon"]}`, doc: "PostgreSQL connections per process (see \"Many hosts on one database\"; 1502)", apps: ALL, section: "Faults, health and load" },
  { name: "REDIS_COMMAND_TIMEOUT_MS", kind: "int", default: 2000, min: 50, doc: "one Redis command of a producer (enqueue, job state, rate limiter)", apps: ALL, section: "Faults, health and load" },
  { name: "STORAGE_TIMEOUT_MS", kind: "int", default: 10_000, min: 100, doc: "one request to S3", apps: ALL, section: "Faults, health and load" },
  { name: "STORAGE_MIN_FREE_BYTES", kind: "int", default: 64 * 1024 * 1024, min: 0, doc: "local disk: a write leaving less free space is refused, and /readyz answers 503 below it (0831); not used with S3", apps: ALL, section: "Faults, health and load" },
  { name: "RETRY_AFTER_SECONDS", kind: "int", default: 5, min: 1, doc: "the Retry-After of a 503 SERVICE_UNAVAILABLE", apps: ALL, section: "Faults, health and load" },
  { name: "READY_CHECK_TIMEOUT_MS", kind: "int", default: 1000, min: 50, doc: "each check of GET /readyz", apps: ALL, section: "Faults, health and load" },
  { name: "SHUTDOWN_GRACE_MS", kind: "int", default: 15_000, min: 0, doc: "SIGTERM: requests in flight may finish this long, the rest get 503", apps: ALL, section: "Faults, health and load" },
  { name: "UPLOAD_TRANSFER_TIMEOUT_MS", kind: "int", default: 600_000, min: 1000, doc: "the longest signed PUT to the API; older temporary files are swept", apps: API, section: "Faults, health and load" },
  { name: "API_KEY_CACHE_TTL_MS", kind: "int", default: 30_000, min: 0, doc: "verified keys trusted in process (a revoke reaches every process at once); 0: off", apps: API, section: "Faults, health and load" },
  { name: "RATE_LIMIT_REQUESTS", kind: "int", default: 0, min: 0, doc: "requests per API key and window, shared through Redis when `REDIS_URL` is set; 0: no limit", apps: API, section: "Faults, health and load" },
  { name: "RATE_LIMIT_WINDOW_MS", kind: "int", default: 60_000, min: 1000, doc: "the rate limit's window", apps: API, section: "Faults, health and load" },
  { name: "IDEMPOTENCY_MAX_ANSWER_BYTES", kind: "int", default: 1024 * 1024, min: 0, doc: "the largest answer kept for an `Idempotency-Key` replay (1 MiB); a larger one is not kept, yet its key still holds: the replay answers 409 CONFLICT saying so (1410)", apps: API, section: "Faults, health and load" },
  { name: "IDEMPOTENCY_ORG_BYTES", kind: "int", default: 64 * 1024 * 1024, min: 0, doc: "what one organization's kept answers may weigh in a rolling day (64 MiB); past it, answers are not kept as above (1410)", apps: API, section: "Faults, health and load" },
  { name: "MEDIA_SWEEP_EVERY_MS", kind: "int", default: 30_000, min: 0, doc: "how often uploads are settled and temporary and orphaned files removed; 0: never", apps: API, section: "Faults, health and load" },
  { name: "MEDIA_ORPHAN_SWEEP_EVERY_MS", kind: "int", default: 600_000, min: 0, doc: "how often the store is walked for objects no row claims (each walk costs a listing)", apps: API, section: "Faults, health and load" },
  { name: "MEDIA_ORPHAN_GRACE_MS", kind: "int", default: 3_600_000, min: 1000, doc: "an unclaimed object younger than this is left alone", apps: API, section: "Faults, health and load" },
  { name: "METRICS_HEALTH_PORT", kind: "int", default: null, min: 0, defaultText: "none (9466 in the image)", example: "9466", doc: "the metrics app's GET /healthz and /readyz; unset: no listener", apps: ["metrics"], section: "Faults, health and load" },
  // --- Newsletters ---
  { name: "SMTP_URL", kind: "url", default: null, protocols: ["smtp:", "smtps:"], defaultText: "none: `.eml` files in `DATA_DIR/outbox/`", example: "smtp://user:pass@smtp.example.com:587", secret: true, doc: "`smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465`; unset, mail is written as files (said at start)", apps: SENDERS, section: "Newsletters" },
  { name: "MAIL_FROM", kind: "string", default: null, defaultText: "`newsletter@<host of PUBLIC_BASE_URL>`", example: "newsletter@example.com", doc: "the sender address; a campaign's `fromName` is its display name", apps: SENDERS, section: "Newsletters" },
  { name: "SMTP_RATE_PER_MINUTE", kind: "int", default: 600, min: 0, doc: "messages per minute per sending process; 0: unthrottled", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_MEDIA_TOKEN_TTL_S", kind: "int", default: 2_592_000, min: 1, doc: "lifetime of the share tokens of images in test mails (30 days)", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_MAIL_MEDIA_TTL_S", kind: "int", default: 31_536_000, min: 1, doc: "lifetime of the image links of a campaign's mails (a year; revocable per campaign)", apps: SENDERS, section: "Newsletters" },
  { name: "SMTP_HELO_NAME", kind: "string", default: null, defaultText: "the host of `PUBLIC_BASE_URL` (an IP as `[192.0.2.1]`)", example: "mail.example.com", doc: "the name given in EHLO; never `localhost` (Google's relay answers 421 to it)", apps: SENDERS, section: "Newsletters" },
  { name: "DKIM_DOMAIN", kind: "string", default: null, defaultText: "none: unsigned", example: "example.com", doc: "with `DKIM_SELECTOR` and `DKIM_PRIVATE_KEY_FILE` (all three or none): sign every mail (`c=relaxed/relaxed`, covers both List-Unsubscribe headers and Feedback-ID)", apps: SENDERS, section: "Newsletters" },
  { name: "DKIM_SELECTOR", kind: "list", default: null, defaultText: "none: unsigned", example: "news2026", doc: "the selector of each key, comma-separated in the key files' order (the TXT record `<selector>._domainkey.<domain>` holds its public key)", apps: SENDERS, section: "Newsletters" },
  { name: "DKIM_PRIVATE_KEY_FILE", kind: "list", default: null, defaultText: "none: unsigned", example: "/etc/site/dkim.pem", doc: "PEM key files, RSA or Ed25519, comma-separated: every key signs; an Ed25519 key without an RSA key refuses to start (1453)", apps: SENDERS, section: "Newsletters" },
  { name: "MAIL_BOUNCE_ADDRESS", kind: "string", default: null, defaultText: "`MAIL_FROM`", example: "bounces@example.com", doc: "the envelope sender, tagged per message (`local+<tag>@domain`): where bounces return; feed them to POST /api/v1/newsletter/inbound", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_TEST_SENDS_PER_DAY", kind: "int", default: 50, min: 0, doc: "test mails a day per organization to addresses that are not its members; 0: members only", apps: API, section: "Newsletters" },
  { name: "NEWSLETTER_LEASE_MS", kind: "int", default: 120_000, min: 100, doc: "a recipient claimed by a process that died is taken again after this", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_SWEEP_EVERY_MS", kind: "int", default: 15_000, min: 50, doc: "how often due campaigns start and stalled sends are taken up", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_CONCURRENCY", kind: "int", default: 8, min: 1, doc: "deliveries in flight (and SMTP connections) per sending process", apps: SENDERS, section: "Newsletters" },
  { name: "SMTP_TIMEOUT_MS", kind: "int", default: 30_000, min: 100, doc: "the most one SMTP step may take (connecting, the greeting, each reply): a relay that stops answering drops the connection, the delivery is tried again", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_SOFT_BOUNCE_LIMIT", kind: "int", default: 3, min: 1, doc: "soft bounces (4.x.x, 5.2.2) of one address within 30 days that make it `bounced`", apps: SENDERS, section: "Newsletters" },
  { name: "NEWSLETTER_SNS_CERT_HOSTS", kind: "list", default: "sns.*.amazonaws.com,sns.*.amazonaws.com.cn", doc: "hosts an SNS message's signing certificate (and SubscribeURL) may be on, for Amazon SES bounces through SNS (`*`: one DNS label)", apps: API, section: "Newsletters" },
  // --- Social platforms ---
  ...platformFamily("SOCIAL_API_BASE_<PLATFORM>", (p) => `SOCIAL_API_BASE_${p}`, { kind: "url", default: null, protocols: HTTP_S, defaultText: "the platform's real API", doc: "base URL of each social platform's API (Instagram and Threads: the host; the version is appended)", apps: SOCIAL, section: "Social platforms" }),
  ...platformFamily("SOCIAL_<PLATFORM>_CLIENT_ID", (p) => `SOCIAL_${p}_CLIENT_ID`, { kind: "string", default: null, doc: "the platform's OAuth client id (TikTok's client_key): connect and token renewal, callback `$PUBLIC_BASE_URL/api/v1/social/oauth/<platform>/callback`; unset: connect answers 501", apps: SOCIAL, section: "Social platforms" }),
  ...platformFamily("SOCIAL_<PLATFORM>_CLIENT_SECRET", (p) => `SOCIAL_${p}_CLIENT_SECRET`, { kind: "string", default: "", secret: true, doc: "the secret of that OAuth client", apps: SOCIAL, section: "Social platforms" }),
  ...platformFamily("SOCIAL_AUTH_BASE_<PLATFORM>", (p) => `SOCIAL_AUTH_BASE_${p}`, { kind: "url", default: null, protocols: HTTP_S, defaultText: "the platform's real authorization hosts", doc: "the base its OAuth authorize and token paths are taken after (tests, proxies)", apps: SOCIAL, section: "Social platforms" }),
  { name: "LINKEDIN_API_VERSION", kind: "string", default: "202607", doc: "the `LinkedIn-Version` header (YYYYMM; versions live about a year); a sunset one fails as \"API version sunset\"", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_POLL_INTERVAL_MS", kind: "int", default: 3000, min: 1, doc: "waiting for a platform to process media before publishing: the pause between checks", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_POLL_MAX_ATTEMPTS", kind: "int", default: 60, min: 1, doc: "…and at most this many checks", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_PUBLISH_WAIT_S", kind: "int", default: 20, min: 0, doc: "how long `POST /api/v1/social/posts` waits for its targets; those still working answer `publishing` and finish in the background", apps: API, section: "Social platforms" },
  { name: "SOCIAL_PUBLISH_RETRY_WINDOW_S", kind: "int", default: 3600, min: 0, doc: "a target refused for a rate limit waits what the platform says and tries again within this window, then fails with the platform's words", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_SHARE_TOKEN_SECONDS", kind: "int", default: 86_400, min: 60, doc: "how long a share URL given to a platform at publish stays valid", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_VIDEO_MAX_BYTES", kind: "int", default: 104_857_600, min: 1, doc: "the largest MP4 of the social media library", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_GRAPH_VERSION", kind: "string", default: "v25.0", doc: "the Instagram Graph API version (after `SOCIAL_API_BASE_INSTAGRAM`, a host); a warning is logged 90 days before a sunset", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_THREADS_VERSION", kind: "string", default: "v1.0", doc: "the Threads API version (after `SOCIAL_API_BASE_THREADS`, a host)", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_LINKEDIN_RESTRICTED_SCOPES", kind: "list", default: null, example: "r_member_social", doc: "restricted LinkedIn scopes the app was granted (`r_member_social`), asked for at connect", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_LINKEDIN_REFRESH_TOKENS", kind: "bool", default: false, doc: "1 for Marketing Developer Platform partners (LinkedIn issues them refresh tokens)", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_TIKTOK_AUDITED", kind: "bool", default: false, doc: "TikTok audited the app: privacy levels other than `SELF_ONLY` are accepted, and a TikTok target needs the user's `platformOptions.tiktok` (off: posts go out `SELF_ONLY`)", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_TIKTOK_READ_METRICS", kind: "bool", default: false, doc: "connect asks TikTok for `video.list` and TikTok metrics are read through `/v2/video/query/` (off: null metrics, as the spec's further platform; decision 1032)", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES", kind: "list", default: null, example: "https://api.example.com/api/media/", doc: "URL prefixes verified with TikTok (comma-separated): media there is pulled, other videos uploaded, other photos refused", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_REDDIT_DEVELOPER", kind: "string", default: null, defaultText: "none (the account's name)", doc: "the Reddit user named in the User-Agent `(by /u/<name>)`", apps: SOCIAL, section: "Social platforms" },
  { name: "SOCIAL_REDIRECT_ORIGINS", kind: "origins", default: null, defaultText: "`PUBLIC_BASE_URL`'s origin", doc: "origins a connect `redirectUri` may be on (comma-separated)", apps: API, section: "Social platforms" },
  // --- AI image generation ---
  { name: "IMAGE_API_BASE", kind: "url", default: null, protocols: HTTP_S, example: "https://api.openai.com/v1", doc: "an OpenAI-compatible images API for `POST /api/v1/social/media/generate`; unset: 501", apps: API, section: "AI image generation" },
  { name: "IMAGE_API_KEY", kind: "string", default: null, secret: true, doc: "the key of that images API", apps: API, section: "AI image generation" },
  { name: "IMAGE_MODEL", kind: "string", default: "gpt-image-1", doc: "the model asked for", apps: API, section: "AI image generation" },
  { name: "IMAGE_CREDITS_PER_IMAGE", kind: "int", default: 10, min: 0, doc: "AI credits a generated image costs", apps: API, section: "AI image generation" },
  // --- Development ---
  { name: "ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT", kind: "bool", default: false, example: "1", notInProduction: { kind: "development", why: "lets the server fetch and film private addresses" }, doc: "URL import and filming may reach this machine and its private network (loopback, 10/8, 172.16/12, 192.168/16, fc00::/7; plain http to them too); logged loudly at start", apps: RENDERS, section: "Development" },
  // --- Test hooks ---
  { name: "FETCH_ALLOW_HOSTS", kind: "list", default: null, example: "127.0.0.1:8443", notInProduction: { kind: "test hook", why: "exempts hosts from the private-address guard (a test hook)" }, doc: "exempt exactly these `host:port` pairs from the public-address rule (test receivers on loopback, plain http included)", apps: RENDERS, section: "Test hooks" },
  // --- Webhooks ---
  { name: "WEBHOOK_RETRY_SCHEDULE_S", kind: "list", default: DEFAULT_WEBHOOK_RETRY_SCHEDULE_S.join(","), doc: "seconds before each retry (±10% jitter; at most 50): a delivery is tried once plus once per entry", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_TIMEOUT_MS", kind: "int", default: 15_000, min: 100, doc: "one try's deadline: connect, send, answer (Standard Webhooks recommends 15–30 s; 1401)", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_DISABLE_AFTER_S", kind: "int", default: 5 * 24 * 3600, min: 1, doc: "an endpoint failing without a success this long (5 days) is disabled", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_CONCURRENCY", kind: "int", default: 32, min: 1, doc: "tries in flight per sending process", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_ORG_CONCURRENCY", kind: "int", default: 8, min: 1, doc: "tries in flight per organization, all processes together", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_ENDPOINT_CONCURRENCY", kind: "int", default: 4, min: 1, doc: "tries in flight per endpoint, all processes together", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_LEASE_MS", kind: "int", default: 120_000, min: 1000, doc: "a claimed try not finished by a process that died is claimed again after this", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_SWEEP_EVERY_MS", kind: "int", default: 5000, min: 50, doc: "how often due deliveries are looked for without a notice: the latest a due retry waits to be noticed", apps: SENDERS, section: "Webhooks" },
  { name: "WEBHOOK_RETENTION_S", kind: "int", default: 30 * 86_400, min: 60, doc: "settled deliveries (and events with none left) older than this (30 days) are deleted (0845)", apps: SENDERS, section: "Webhooks" },
];

const BY_NAME = new Map(SETTINGS.map((s) => [s.name, s]));

/** The declaration of `name`; an undeclared name is a programming error, named with where to declare it. */
export function settingDecl(name: string): SettingDecl {
  const decl = BY_NAME.get(name);
  if (!decl) throw new Error(`${name} is not a declared setting: declare it in libs/config/src/settings.ts`);
  return decl;
}
