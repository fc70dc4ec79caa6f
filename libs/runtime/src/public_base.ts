import { type Config, type Logger, loadConfig, rawSetting, readServerRecord } from "@site/config";
import { type Database, serviceRecords } from "@site/db";
import { eq, sql } from "drizzle-orm";

/** The name under which the API records its PUBLIC_BASE_URL in the database (service_records). */
export const PUBLIC_BASE_RECORD = "public_base_url";

/** Records this API's public base in the database, where daemons on other machines read it. */
export async function recordPublicBase(db: Database, publicBaseUrl: string): Promise<void> {
  await db
    .insert(serviceRecords)
    .values({ name: PUBLIC_BASE_RECORD, value: publicBaseUrl })
    .onConflictDoUpdate({
      target: serviceRecords.name,
      set: { value: publicBaseUrl, updatedAt: sql`now()` },
    });
}

/** The public base the API recorded: in the database, else in DATA_DIR/api.json (the same machine); null when none. */
export async function recordedPublicBase(db: Database, dataDir: string): Promise<string | null> {
  const [row] = await db
    .select({ value: serviceRecords.value })
    .from(serviceRecords)
    .where(eq(serviceRecords.name, PUBLIC_BASE_RECORD))
    .catch(() => []);
  return row?.value ?? readServerRecord(dataDir)?.publicBaseUrl ?? null;
}

/**
 * One PUBLIC_BASE_URL in every process (CONTRACT "Mail replies…", decision 1454): the API records its
 * own (`record`); any other process (`adopt`) without a PUBLIC_BASE_URL of its own takes the recorded
 * one (its configuration is read again with it: MAIL_FROM's and SMTP_HELO_NAME's defaults follow), and
 * one whose PUBLIC_BASE_URL differs from the recorded one logs a warning naming both. Returns the
 * configuration the process goes on with.
 */
export async function sharePublicBase(
  rt: { db: Database; config: Config; log: Pick<Logger, "warn" | "info"> },
  role: "record" | "adopt",
  env: Record<string, string | undefined> = process.env,
): Promise<Config> {
  if (role === "record") {
    await recordPublicBase(rt.db, rt.config.publicBaseUrl).catch((err) =>
      rt.log.warn("the public base URL could not be recorded in the database", { cause: err }),
    );
    return rt.config;
  }
  const recorded = await recordedPublicBase(rt.db, rt.config.dataDir);
  if (!recorded) return rt.config;
  const own = rawSetting(env, "PUBLIC_BASE_URL")?.trim();
  if (!own) {
    rt.log.info("PUBLIC_BASE_URL taken from the API's record", { publicBaseUrl: recorded });
    return loadConfig({ ...env, PUBLIC_BASE_URL: recorded });
  }
  if (new URL(own).href !== new URL(recorded).href)
    rt.log.warn(
      `PUBLIC_BASE_URL differs from the API's: this process uses ${rt.config.publicBaseUrl}, the API recorded ${recorded}; links and mail written here point elsewhere than the API serves. Give every process the same PUBLIC_BASE_URL (or none: the API's is then taken)`,
      { publicBaseUrl: rt.config.publicBaseUrl, apiPublicBaseUrl: recorded },
    );
  return rt.config;
}
