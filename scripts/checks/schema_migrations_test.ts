import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type DbHandle, schema } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { generateDrizzleJson } from "drizzle-kit/api";

/**
 * A table has one home, libs/db/src/schema, and the hand-written migrations must say the same thing
 * (decision 1540). Two checks, both with drizzle-kit itself:
 * - `drizzle-kit generate` against a copy of libs/db/drizzle emits nothing: the head snapshot is the
 *   schema, so the next `generate` writes only what the schema changes next.
 * - `drizzle-kit push --strict` against a fresh database the migrations built finds nothing to do:
 *   the schema agrees with what the SQL created. Three differences push reports are drizzle-kit's
 *   reading of the catalog, not a disagreement; each is listed below and checked in pg_catalog instead.
 */
const ROOT = resolve(import.meta.dir, "../..");
const DB_DIR = join(ROOT, "libs/db");
const SCHEMA = join(DB_DIR, "src/schema/mod.ts");
const KIT = join(ROOT, "node_modules/drizzle-kit/bin.cjs");

/** What drizzle-kit says; it exits 0 even where it stops at a prompt, so the output is what counts. */
function drizzleKit(args: string[], cwd: string): string {
  const run = Bun.spawnSync([process.execPath, KIT, ...args], {
    cwd,
    stdin: "ignore",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  // The spinner redraws its line with escape sequences; only the text is compared.
  return (run.stdout.toString() + run.stderr.toString()).replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

/** The statements `push` would run, one a line as it prints them. */
function pushStatements(output: string): string[] {
  return output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^(ALTER|CREATE|DROP|COMMENT|DO|INSERT|UPDATE|DELETE|TRUNCATE)\b.*;$/.test(l));
}

/**
 * Differences `push` reports that are drizzle-kit's reading of the catalog (drizzle-kit 0.31): the
 * statements it would run, and what the database and the schema each say instead, checked directly.
 */
const READING_ARTEFACTS: {
  why: string;
  statements: string[];
  catalog: { sql: string; expected: string };
  schema: (json: ReturnType<typeof generateDrizzleJson>) => unknown;
  declared: unknown;
}[] = [
  {
    why: "a unique constraint's columns are read in table order, not the constraint's (subject_id, reason)",
    statements: [
      `ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_subject_reason";`,
      `ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_subject_reason" UNIQUE("subject_id","reason");`,
    ],
    catalog: {
      sql: `select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'credit_ledger_subject_reason'`,
      expected: "UNIQUE (subject_id, reason)",
    },
    schema: (j) => j.tables["public.credit_ledger"]?.uniqueConstraints.credit_ledger_subject_reason?.columns,
    declared: ["subject_id", "reason"],
  },
  {
    why: "INCLUDE columns are read as key columns, and Drizzle's index builder cannot say INCLUDE (migration 0021)",
    statements: [
      `DROP INDEX "idempotency_keys_org_created_idx";`,
      `CREATE INDEX "idempotency_keys_org_created_idx" ON "idempotency_keys" USING btree ("org_id","created_at");`,
    ],
    catalog: {
      sql: `select pg_get_indexdef('idempotency_keys_org_created_idx'::regclass) as def`,
      expected:
        "CREATE INDEX idempotency_keys_org_created_idx ON public.idempotency_keys USING btree (org_id, created_at) INCLUDE (answer_bytes)",
    },
    schema: (j) =>
      j.tables["public.idempotency_keys"]?.indexes.idempotency_keys_org_created_idx?.columns.map(
        (c: { expression: string }) => c.expression,
      ),
    declared: ["org_id", "created_at"],
  },
  {
    why: "an empty-array default '{}'::text[] is read as '{\"\"}'",
    statements: [`ALTER TABLE "social_accounts" ALTER COLUMN "permissions" SET DEFAULT '{}'::text[];`],
    catalog: {
      sql: `select pg_get_expr(d.adbin, d.adrelid) as def from pg_attrdef d join pg_attribute a
              on a.attrelid = d.adrelid and a.attnum = d.adnum
            where d.adrelid = 'social_accounts'::regclass and a.attname = 'permissions'`,
      expected: "'{}'::text[]",
    },
    schema: (j) => j.tables["public.social_accounts"]?.columns.permissions?.default,
    declared: "'{}'::text[]",
  },
  {
    why: "an empty-array default '{}'::uuid[] is read as '{\"\"}'",
    statements: [`ALTER TABLE "social_posts" ALTER COLUMN "media" SET DEFAULT '{}'::uuid[];`],
    catalog: {
      sql: `select pg_get_expr(d.adbin, d.adrelid) as def from pg_attrdef d join pg_attribute a
              on a.attrelid = d.adrelid and a.attnum = d.adnum
            where d.adrelid = 'social_posts'::regclass and a.attname = 'media'`,
      expected: "'{}'::uuid[]",
    },
    schema: (j) => j.tables["public.social_posts"]?.columns.media?.default,
    declared: "'{}'::uuid[]",
  },
];

describe("the schema and the migrations agree", () => {
  test("drizzle-kit generate emits nothing: the head snapshot is the schema", () => {
    const dir = mkdtempSync(join(tmpdir(), "schema-generate-"));
    try {
      cpSync(join(DB_DIR, "drizzle"), join(dir, "drizzle"), { recursive: true });
      const before = readdirSync(join(dir, "drizzle")).sort();
      const out = drizzleKit(
        ["generate", "--dialect", "postgresql", "--schema", SCHEMA, "--out", "drizzle"],
        dir,
      );
      expect(out).toContain("No schema changes, nothing to migrate");
      expect(readdirSync(join(dir, "drizzle")).sort()).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the journal names every migration file, and the head snapshot follows the last one kept", () => {
    const journal = JSON.parse(readFileSync(join(DB_DIR, "drizzle/meta/_journal.json"), "utf8")) as {
      entries: { idx: number; tag: string }[];
    };
    const files = readdirSync(join(DB_DIR, "drizzle")).filter((f) => f.endsWith(".sql"));
    expect(files.sort()).toEqual(journal.entries.map((e) => `${e.tag}.sql`).sort());
    for (const e of journal.entries) expect(e.tag.slice(0, 4)).toBe(String(e.idx).padStart(4, "0"));
    const last = journal.entries.at(-1)!;
    const snapshots = readdirSync(join(DB_DIR, "drizzle/meta")).filter((f) => f.endsWith("_snapshot.json"));
    expect(snapshots.sort().at(-1)).toBe(`${last.tag.slice(0, 4)}_snapshot.json`);
  });

  describe("against a database the migrations built", () => {
    let db: DbHandle;
    beforeAll(async () => {
      db = await createTestDatabase({ max: 2 });
    });
    afterAll(async () => {
      await db?.close();
    });

    test("drizzle-kit push --strict finds nothing to change but its known misreadings", () => {
      const out = drizzleKit(
        ["push", "--dialect", "postgresql", "--schema", SCHEMA, "--url", db.url, "--strict", "--verbose"],
        DB_DIR,
      );
      expect(out).toContain("Pulling schema from database");
      const known = new Set(READING_ARTEFACTS.flatMap((a) => a.statements));
      const statements = pushStatements(out);
      // Anything else is the schema and the migrations disagreeing: a column, index, key or check.
      expect(statements.filter((s) => !known.has(s))).toEqual([]);
      if (statements.length === 0) expect(out).toContain("No changes detected");
    });

    for (const a of READING_ARTEFACTS)
      test(`where push misreads the catalog, the database and the schema still agree: ${a.why}`, async () => {
        const [row] = await db.sql.unsafe<{ def: string }[]>(a.catalog.sql);
        expect(row?.def).toBe(a.catalog.expected);
        expect(a.schema(generateDrizzleJson(schema as Record<string, unknown>))).toEqual(a.declared);
      });
  });
});
