import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, DB_POOL_DEFAULTS, loadConfig } from "./config.ts";

const base = { SECRET_KEY: "0123456789abcdef0123" };

describe("configuration is read once, with the contract's defaults", () => {
  test("defaults match the contract", () => {
    const c = loadConfig(base);
    expect(c.port).toBe(3000);
    expect(c.host).toBe("127.0.0.1");
    expect(c.publicBaseUrl).toBe("http://127.0.0.1:3000");
    expect(c.databaseUrl).toBeNull();
    expect(c.redisUrl).toBeNull();
    expect(c.s3).toBeNull();
    expect(c.limits).toEqual({
      dailyUploads: 200,
      dailyFetchAttempts: 50,
      importMaxRedirects: 3,
      importMaxBytes: 10485760,
      importTimeoutMs: 15000,
      orgStorageQuotaBytes: 5 * 1024 ** 3,
      orgSiteLimit: 25,
      siteDeleteGraceS: 7 * 24 * 3600,
      mediaMaxPixels: 40_000_000,
    });
    expect(c.fetchAllowHosts).toEqual([]);
    expect(c.mcpAllowedOrigins).toEqual([]);
    expect(c.newsletter).toEqual({
      smtpUrl: null,
      mailFrom: "newsletter@localhost",
      ratePerMinute: 600,
      mediaTokenTtlSeconds: 2_592_000,
      leaseMs: 120_000,
      sweepEveryMs: 15_000,
      concurrency: 8,
      smtpTimeoutMs: 30_000,
      softBounceLimit: 3,
      snsCertHosts: ["sns.*.amazonaws.com", "sns.*.amazonaws.com.cn"],
      heloName: "[127.0.0.1]",
      dkim: null,
      bounceAddress: "newsletter@localhost",
      mailMediaTtlSeconds: 31_536_000,
      testSendsPerDay: 50,
    });
  });

  test("newsletter settings: SMTP_URL smtp(s) only, MAIL_FROM an address or the public host's", () => {
    const c = loadConfig({
      ...base,
      SMTP_URL: "smtps://u:p@mail.example.com:465",
      PUBLIC_BASE_URL: "https://api.example.com",
    });
    expect(c.newsletter.smtpUrl).toBe("smtps://u:p@mail.example.com:465");
    expect(c.newsletter.mailFrom).toBe("newsletter@api.example.com");
    expect(loadConfig({ ...base, MAIL_FROM: "news@example.com" }).newsletter.mailFrom).toBe(
      "news@example.com",
    );
    expect(() => loadConfig({ ...base, SMTP_URL: "http://mail.example.com" })).toThrow("SMTP_URL");
    expect(() => loadConfig({ ...base, MAIL_FROM: "Newsletter <x>" })).toThrow("MAIL_FROM");
    expect(() => loadConfig({ ...base, SMTP_RATE_PER_MINUTE: "-1" })).toThrow("SMTP_RATE_PER_MINUTE");
    expect(() => loadConfig({ ...base, NEWSLETTER_MEDIA_TOKEN_TTL_S: "0" })).toThrow(
      "NEWSLETTER_MEDIA_TOKEN_TTL_S",
    );
  });

  test("mail delivery settings: EHLO name never localhost, DKIM keys RSA or Ed25519, bounce address", () => {
    const helo = (env: Record<string, string>) => loadConfig({ ...base, ...env }).newsletter.heloName;
    expect(helo({ PUBLIC_BASE_URL: "https://News.Example.com" })).toBe("news.example.com");
    expect(helo({ PUBLIC_BASE_URL: "http://127.0.0.1:3000" })).toBe("[127.0.0.1]");
    expect(helo({ PUBLIC_BASE_URL: "http://[::1]:3000" })).toBe("[IPv6:::1]");
    expect(helo({ PUBLIC_BASE_URL: "http://localhost:3000" })).toBe("[127.0.0.1]");
    expect(helo({ PUBLIC_BASE_URL: "http://localhost:3000", SMTP_HELO_NAME: "mx1.example.org" })).toBe(
      "mx1.example.org",
    );
    expect(helo({ SMTP_HELO_NAME: "192.0.2.7" })).toBe("[192.0.2.7]");
    expect(() => helo({ SMTP_HELO_NAME: "localhost" })).toThrow("SMTP_HELO_NAME");
    const dir = mkdtempSync(join(tmpdir(), "dkim-"));
    const pem = (type: "rsa" | "ed25519" | "ec") =>
      (type === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: 1024 })
        : type === "ec"
          ? generateKeyPairSync("ec", { namedCurve: "P-256" })
          : generateKeyPairSync("ed25519")
      ).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    for (const type of ["rsa", "ed25519", "ec"] as const) writeFileSync(join(dir, `${type}.pem`), pem(type));
    const dkim = (file: string) =>
      loadConfig({ ...base, DKIM_DOMAIN: "example.com", DKIM_SELECTOR: "news", DKIM_PRIVATE_KEY_FILE: file })
        .newsletter.dkim;
    expect(dkim(join(dir, "rsa.pem"))).toMatchObject({
      domain: "example.com",
      keys: [{ selector: "news", keyType: "rsa" }],
    });
    // An Ed25519 key alone: refused, naming the setting (Gmail, Outlook and Yahoo verify only RSA).
    expect(() => dkim(join(dir, "ed25519.pem"))).toThrow(
      "DKIM_PRIVATE_KEY_FILE: an Ed25519 key alone is refused",
    );
    const both = loadConfig({
      ...base,
      DKIM_DOMAIN: "example.com",
      DKIM_SELECTOR: "rsa1, ed1",
      DKIM_PRIVATE_KEY_FILE: `${join(dir, "rsa.pem")},${join(dir, "ed25519.pem")}`,
    }).newsletter.dkim;
    expect(both?.keys.map((k) => [k.selector, k.keyType])).toEqual([
      ["rsa1", "rsa"],
      ["ed1", "ed25519"],
    ]);
    expect(() =>
      loadConfig({
        ...base,
        DKIM_DOMAIN: "example.com",
        DKIM_SELECTOR: "rsa1",
        DKIM_PRIVATE_KEY_FILE: `${join(dir, "rsa.pem")},${join(dir, "ed25519.pem")}`,
      }),
    ).toThrow("one selector per key");
    expect(() => dkim(join(dir, "ec.pem"))).toThrow("RSA or Ed25519");
    expect(() => dkim(join(dir, "missing.pem"))).toThrow("DKIM_PRIVATE_KEY_FILE");
    expect(() => loadConfig({ ...base, DKIM_DOMAIN: "example.com" })).toThrow("go together");
    expect(loadConfig({ ...base, MAIL_FROM: "news@example.com" }).newsletter.bounceAddress).toBe(
      "news@example.com",
    );
    expect(loadConfig({ ...base, MAIL_BOUNCE_ADDRESS: "b@example.com" }).newsletter.bounceAddress).toBe(
      "b@example.com",
    );
    expect(() => loadConfig({ ...base, MAIL_BOUNCE_ADDRESS: "b+x@example.com" })).toThrow(
      "MAIL_BOUNCE_ADDRESS",
    );
  });

  test("social publishing and image generation settings: defaults, clients per platform, bad values fail at boot", () => {
    const c = loadConfig(base);
    expect(c.social).toEqual({
      linkedinVersion: "202607",
      poll: { intervalMs: 3000, maxAttempts: 60 },
      shareTokenSeconds: 86400,
      publishWaitS: 20,
      publishRetryWindowS: 3600,
      videoMaxBytes: 104857600,
      authBase: { instagram: null, threads: null, x: null, linkedin: null, reddit: null, tiktok: null },
      clients: { instagram: null, threads: null, x: null, linkedin: null, reddit: null, tiktok: null },
      graphVersion: "v25.0",
      threadsVersion: "v1.0",
      linkedinRestrictedScopes: [],
      linkedinRefreshTokens: false,
      tiktokAudited: false,
      tiktokReadMetrics: false,
      tiktokVerifiedUrlPrefixes: [],
      redditDeveloper: null,
      redirectOrigins: [new URL(c.publicBaseUrl).origin],
    });
    expect(c.image).toEqual({ apiBase: null, apiKey: null, model: "gpt-image-1", creditsPerImage: 10 });
    const set = loadConfig({
      ...base,
      SOCIAL_X_CLIENT_ID: "cid",
      SOCIAL_X_CLIENT_SECRET: "sec",
      SOCIAL_AUTH_BASE_X: "http://127.0.0.1:9/auth/x",
      LINKEDIN_API_VERSION: "202611",
      IMAGE_API_BASE: "https://api.openai.com/v1",
      IMAGE_CREDITS_PER_IMAGE: "4",
    });
    expect(set.social.clients.x).toEqual({ id: "cid", secret: "sec" });
    expect(set.social.authBase.x).toBe("http://127.0.0.1:9/auth/x");
    expect(set.social.linkedinVersion).toBe("202611");
    expect(set.image).toMatchObject({ apiBase: "https://api.openai.com/v1", creditsPerImage: 4 });
    expect(() => loadConfig({ ...base, LINKEDIN_API_VERSION: "2024-11" })).toThrow(/LINKEDIN_API_VERSION/);
    expect(() => loadConfig({ ...base, IMAGE_API_BASE: "ftp://x" })).toThrow(/IMAGE_API_BASE/);
    expect(() => loadConfig({ ...base, SOCIAL_POLL_MAX_ATTEMPTS: "0" })).toThrow(/SOCIAL_POLL_MAX_ATTEMPTS/);
  });

  test("social provider settings (issue 24): versions, restricted scopes, TikTok audit and prefixes, redirect origins", () => {
    const c = loadConfig({
      ...base,
      PUBLIC_BASE_URL: "https://api.example.com/base",
      SOCIAL_GRAPH_VERSION: "v26.0",
      SOCIAL_LINKEDIN_RESTRICTED_SCOPES: "r_member_social",
      SOCIAL_TIKTOK_AUDITED: "1",
      SOCIAL_TIKTOK_READ_METRICS: "1",
      SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "https://cdn.example.com/media/",
      SOCIAL_REDDIT_DEVELOPER: "/u/acme_dev",
    });
    expect(c.social).toMatchObject({
      graphVersion: "v26.0",
      linkedinRestrictedScopes: ["r_member_social"],
      tiktokAudited: true,
      tiktokReadMetrics: true,
      tiktokVerifiedUrlPrefixes: ["https://cdn.example.com/media/"],
      redditDeveloper: "acme_dev",
      redirectOrigins: ["https://api.example.com"],
    });
    expect(
      loadConfig({ ...base, SOCIAL_REDIRECT_ORIGINS: "https://app.example, http://127.0.0.1:5173" }).social
        .redirectOrigins,
    ).toEqual(["https://app.example", "http://127.0.0.1:5173"]);
    expect(() => loadConfig({ ...base, SOCIAL_GRAPH_VERSION: "25" })).toThrow(/SOCIAL_GRAPH_VERSION/);
    expect(() => loadConfig({ ...base, SOCIAL_REDIRECT_ORIGINS: "https://a.example/x" })).toThrow(
      /SOCIAL_REDIRECT_ORIGINS/,
    );
    expect(() => loadConfig({ ...base, SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "cdn.example" })).toThrow(
      /SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES/,
    );
  });

  test("MCP_ALLOWED_ORIGINS lists origins, normalized; a path or another scheme fails at boot", () => {
    const c = loadConfig({ ...base, MCP_ALLOWED_ORIGINS: "https://App.Example.com, http://127.0.0.1:5173/" });
    expect(c.mcpAllowedOrigins).toEqual(["https://app.example.com", "http://127.0.0.1:5173"]);
    expect(() => loadConfig({ ...base, MCP_ALLOWED_ORIGINS: "https://a.example/path" })).toThrow(
      /MCP_ALLOWED_ORIGINS/,
    );
    expect(() => loadConfig({ ...base, MCP_ALLOWED_ORIGINS: "ftp://a.example" })).toThrow(
      /MCP_ALLOWED_ORIGINS/,
    );
    expect(() => loadConfig({ ...base, MCP_ALLOWED_ORIGINS: "*" })).toThrow(/MCP_ALLOWED_ORIGINS/);
  });

  test("database pooler settings (issue 35): DATABASE_POOLER, DATABASE_LISTEN_URL, per-app DB_POOL_MAX", () => {
    const c = loadConfig(base);
    expect(c.databasePooler).toBeNull();
    expect(c.databaseListenUrl).toBeNull();
    expect(c.databaseListenPollMs).toBe(1000);
    expect(c.dbPoolMax).toBeNull();
    expect(DB_POOL_DEFAULTS).toEqual({ api: 10, "render-daemon": 4, metrics: 4 });
    const p = loadConfig({
      ...base,
      DATABASE_URL: "postgres://app@pgbouncer:6432/site",
      DATABASE_POOLER: "transaction",
      DATABASE_LISTEN_URL: "postgres://app@db:5432/site",
      DATABASE_LISTEN_POLL_MS: "250",
      DB_POOL_MAX: "3",
    });
    expect(p.databasePooler).toBe("transaction");
    expect(p.databaseListenUrl).toBe("postgres://app@db:5432/site");
    expect(p.databaseListenPollMs).toBe(250);
    expect(p.dbPoolMax).toBe(3);
    expect(loadConfig({ ...base, DATABASE_POOLER: "none" }).databasePooler).toBeNull();
    expect(() => loadConfig({ ...base, DATABASE_POOLER: "session" })).toThrow(/DATABASE_POOLER/);
    expect(() => loadConfig({ ...base, DATABASE_LISTEN_URL: "http://db" })).toThrow(/DATABASE_LISTEN_URL/);
    expect(() => loadConfig({ ...base, DATABASE_LISTEN_POLL_MS: "10" })).toThrow(/DATABASE_LISTEN_POLL_MS/);
  });

  test("a bad value fails at boot naming the setting", () => {
    expect(() => loadConfig({ ...base, PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ ...base, DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ...base, RENDER_GPU: "maybe" })).toThrow(/RENDER_GPU/);
    expect(() => loadConfig({ ...base, RENDER_HEADLESS_SHELL: "maybe" })).toThrow(/RENDER_HEADLESS_SHELL/);
    expect(() => loadConfig({ ...base, LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ ...base, MEDIA_DAILY_UPLOAD_LIMIT: "-1" })).toThrow(/MEDIA_DAILY_UPLOAD_LIMIT/);
  });

  test("films use the headless shell unless RENDER_HEADLESS_SHELL turns it off", () => {
    expect(loadConfig(base).renderHeadlessShell).toBe(true);
    expect(loadConfig({ ...base, RENDER_HEADLESS_SHELL: "0" }).renderHeadlessShell).toBe(false);
    expect(loadConfig({ ...base, RENDER_HEADLESS_SHELL: "false" }).renderHeadlessShell).toBe(false);
  });

  test("settings override the defaults", () => {
    const c = loadConfig({
      ...base,
      PORT: "8080",
      HOST: "0.0.0.0",
      PUBLIC_BASE_URL: "https://api.example.test/",
      FETCH_ALLOW_HOSTS: "127.0.0.1:8443, Localhost:9000",
      S3_BUCKET: "media",
      S3_ENDPOINT: "http://127.0.0.1:9000",
      S3_FORCE_PATH_STYLE: "true",
    });
    expect(c.port).toBe(8080);
    expect(c.publicBaseUrl).toBe("https://api.example.test");
    expect(c.fetchAllowHosts).toEqual(["127.0.0.1:8443", "localhost:9000"]);
    expect(c.s3?.forcePathStyle).toBe(true);
    expect(c.s3?.endpoint).toBe("http://127.0.0.1:9000");
  });

  test("without SECRET_KEY one is generated into DATA_DIR and kept", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    const first = loadConfig({ DATA_DIR: dir }).secretKey;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: dir }).secretKey).toBe(first);
    expect(readFileSync(join(dir, "secret.key"), "utf8").trim()).toBe(first);
  });

  test("NODE_EXTRA_CA_CERTS names the extra CA bundle the browsers trust; a missing file fails at boot", () => {
    expect(loadConfig(base).extraCaFile).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), "config-ca-"));
    const file = join(dir, "ca.pem");
    writeFileSync(file, "-----BEGIN CERTIFICATE-----\n");
    expect(loadConfig({ ...base, NODE_EXTRA_CA_CERTS: file }).extraCaFile).toBe(file);
    expect(() => loadConfig({ ...base, NODE_EXTRA_CA_CERTS: join(dir, "nope.pem") })).toThrow(ConfigError);
  });
});

describe("ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT", () => {
  test("is off by default, on when set, and refused at boot when NODE_ENV=production", () => {
    expect(loadConfig(base).allowLocalNetworkForDevelopment).toBe(false);
    expect(
      loadConfig({ ...base, ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: "1" }).allowLocalNetworkForDevelopment,
    ).toBe(true);
    expect(() =>
      loadConfig({ ...base, ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: "1", NODE_ENV: "production" }),
    ).toThrow(/refused when NODE_ENV=production/);
  });
});

describe("test hooks refuse to load in production (decision 1521)", () => {
  test("FETCH_ALLOW_HOSTS, which exempts hosts from the private-address guard, is refused when NODE_ENV=production", () => {
    expect(() =>
      loadConfig({ ...base, FETCH_ALLOW_HOSTS: "127.0.0.1:8443", NODE_ENV: "production" }),
    ).toThrow(
      "FETCH_ALLOW_HOSTS=127.0.0.1:8443 exempts hosts from the private-address guard (a test hook): it is refused when NODE_ENV=production",
    );
    expect(() => loadConfig({ ...base, FETCH_ALLOW_HOSTS: "localhost:1", NODE_ENV: "production" })).toThrow(
      ConfigError,
    );
  });

  test("unset or empty, or outside production, it loads as before", () => {
    expect(loadConfig({ ...base, NODE_ENV: "production" }).fetchAllowHosts).toEqual([]);
    expect(loadConfig({ ...base, FETCH_ALLOW_HOSTS: "", NODE_ENV: "production" }).fetchAllowHosts).toEqual(
      [],
    );
    expect(loadConfig({ ...base, FETCH_ALLOW_HOSTS: " , ", NODE_ENV: "production" }).fetchAllowHosts).toEqual(
      [],
    );
    expect(
      loadConfig({ ...base, FETCH_ALLOW_HOSTS: "127.0.0.1:8443", NODE_ENV: "development" }).fetchAllowHosts,
    ).toEqual(["127.0.0.1:8443"]);
  });

  test("a development switch that is off loads in production; on, it is refused with its reason", () => {
    expect(
      loadConfig({ ...base, ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: "0", NODE_ENV: "production" })
        .allowLocalNetworkForDevelopment,
    ).toBe(false);
    expect(() =>
      loadConfig({ ...base, ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: "true", NODE_ENV: "production" }),
    ).toThrow(
      "ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1 lets the server fetch and film private addresses: it is refused when NODE_ENV=production",
    );
  });
});
