import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "./config.ts";

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
    });
    expect(c.fetchAllowHosts).toEqual([]);
  });

  test("a bad value fails at boot naming the setting", () => {
    expect(() => loadConfig({ ...base, PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ ...base, DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ...base, RENDER_GPU: "maybe" })).toThrow(/RENDER_GPU/);
    expect(() => loadConfig({ ...base, LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ ...base, MEDIA_DAILY_UPLOAD_LIMIT: "-1" })).toThrow(/MEDIA_DAILY_UPLOAD_LIMIT/);
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
});
