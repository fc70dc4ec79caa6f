import { type Clock, createLogger, loadConfig, systemClock } from "@site/config";
import { creditLedger, type Database, organizations } from "@site/db";
import type { Context } from "@site/domain/core";
import { eq } from "drizzle-orm";

/**
 * A domain context on a test database for tests that call the domain directly: the test configuration
 * (a fixed secret, a scratch data folder), a silent log, and `clock` (the real one unless given).
 */
export function testContext(db: Database, clock: Clock = systemClock): Context {
  return {
    config: loadConfig({ SECRET_KEY: "test-secret-key-0123456789", DATA_DIR: "/tmp/site-test-data" }),
    db,
    clock,
    log: createLogger("silent" as never),
  };
}

/** An organization's AI credit balance, read from its row. */
export async function creditsOf(db: Database, orgId: string): Promise<number> {
  return (await db.select().from(organizations).where(eq(organizations.id, orgId)))[0]!.credits;
}

/** An organization's credit ledger besides its opening grant, oldest first: [delta, reason, subject]. */
export async function ledgerOf(db: Database, orgId: string): Promise<[number, string, string | null][]> {
  return (await db.select().from(creditLedger).where(eq(creditLedger.orgId, orgId)))
    .filter((r) => r.reason !== "grant")
    .sort((a, b) => a.id - b.id)
    .map((r) => [r.delta, r.reason, r.subjectId]);
}
