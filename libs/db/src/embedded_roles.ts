import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";

/**
 * The credentials of an embedded cluster, in `DATA_DIR/pg-secrets.json` (0600). The superuser's are for
 * bootstrap only (roles, database, ownership); the service connects as `service`, a role that is not a
 * superuser and owns only its database. `previous` is a superuser password being rotated away: the one
 * initdb was given (it passed through a temporary file), or `postgres` for clusters from before this file.
 */
export type EmbeddedSecrets = {
  superuser: { user: string; password: string; previous?: string };
  service: { user: string; password: string; database: string };
};

/** The file of the cluster's credentials, next to its data directory. */
export const SECRETS_FILE = "pg-secrets.json";
/** What clusters initialised before the secrets file used for their superuser. */
const LEGACY_PASSWORD = "postgres";
const SUPERUSER = "postgres";
const SERVICE = { user: "site", database: "site" };

const newSecret = () => randomBytes(24).toString("hex");
// Hex only, but quoted as SQL literals anyway: ALTER ROLE takes no parameters.
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Writes a file only its owner may read, atomically (a reader sees the old or the new content). */
export function writePrivateFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, text, { mode: 0o600, flag: "wx" });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * The cluster's secrets, created on first use. `initPassword` is the superuser password to give initdb
 * when the cluster does not exist yet; a cluster that exists without a secrets file comes from an
 * earlier version (superuser postgres/postgres), whose password becomes `previous` to be rotated.
 */
export function loadSecrets(
  dataDir: string,
  clusterExists: boolean,
): { secrets: EmbeddedSecrets; initPassword: string } {
  const file = join(dataDir, SECRETS_FILE);
  if (existsSync(file)) {
    const secrets = JSON.parse(readFileSync(file, "utf8")) as EmbeddedSecrets;
    return { secrets, initPassword: secrets.superuser.previous ?? secrets.superuser.password };
  }
  const previous = clusterExists ? LEGACY_PASSWORD : newSecret();
  const secrets: EmbeddedSecrets = {
    superuser: { user: SUPERUSER, password: newSecret(), previous },
    service: { user: SERVICE.user, password: newSecret(), database: SERVICE.database },
  };
  writePrivateFile(file, `${JSON.stringify(secrets, null, 2)}\n`);
  return { secrets, initPassword: previous };
}

/** A connection URL on the loopback port. */
export function clusterUrl(port: number, user: string, password: string, database: string): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

const open = (url: string) => postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });

/**
 * Connects as the superuser with the current password, else the one being rotated away; in the second
 * case sets the current one and drops `previous` from the secrets file.
 */
async function superuser(dataDir: string, port: number, secrets: EmbeddedSecrets, database: string) {
  const su = secrets.superuser;
  const current = open(clusterUrl(port, su.user, su.password, database));
  try {
    await current`select 1`;
    return current;
  } catch (err) {
    await current.end({ timeout: 1 }).catch(() => {});
    if (su.previous === undefined) throw err;
  }
  const old = open(clusterUrl(port, su.user, su.previous, database));
  try {
    await old`select 1`;
  } catch (err) {
    await old.end({ timeout: 1 }).catch(() => {});
    throw new Error(
      `embedded PostgreSQL: neither the superuser password in ${join(dataDir, SECRETS_FILE)} nor the previous one is accepted (${String((err as Error).message)})`,
    );
  }
  await old.unsafe(`alter role ${SUPERUSER} with password ${literal(su.password)}`);
  secrets.superuser = { user: su.user, password: su.password };
  writePrivateFile(join(dataDir, SECRETS_FILE), `${JSON.stringify(secrets, null, 2)}\n`);
  return old;
}

/** True when the maintenance database holds the application's tables (clusters from before the service role). */
async function appInMaintenanceDb(dataDir: string, port: number, secrets: EmbeddedSecrets): Promise<boolean> {
  const sql = await superuser(dataDir, port, secrets, "postgres");
  try {
    const [row] = await sql<{ found: boolean }[]>`
      select exists (select 1 from pg_namespace where nspname = 'drizzle')
          or exists (select 1 from pg_tables where schemaname = 'public') as found`;
    return row?.found ?? false;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// Everything in the application's schemas changes hands to the service role; extension members stay.
const TRANSFER_OWNERSHIP = (role: string) => `
do $$
declare
  r record;
  target oid := (select oid from pg_roles where rolname = ${literal(role)});
begin
  for r in select n.nspname from pg_namespace n
    where n.nspname not like 'pg\\_%' and n.nspname not in ('information_schema', 'public')
      and n.nspowner <> target
      and not exists (select 1 from pg_depend d where d.objid = n.oid and d.deptype = 'e')
  loop
    execute format('alter schema %I owner to %I', r.nspname, ${literal(role)});
  end loop;
  for r in select n.nspname, c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
      and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S') and c.relowner <> target
      and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype in ('a', 'i', 'e'))
  loop
    execute format('alter %s %I.%I owner to %I',
      case r.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table'
        when 'S' then 'sequence' else 'table' end,
      r.nspname, r.relname, ${literal(role)});
  end loop;
  for r in select n.nspname, t.typname, t.typtype from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
      and t.typtype in ('e', 'd', 'r') and t.typowner <> target
      and not exists (select 1 from pg_depend d where d.objid = t.oid and d.deptype = 'e')
  loop
    execute format('alter %s %I.%I owner to %I', case r.typtype when 'd' then 'domain' else 'type' end,
      r.nspname, r.typname, ${literal(role)});
  end loop;
  for r in select p.oid::regprocedure as sig from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema' and p.proowner <> target
      and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
  loop
    execute format('alter routine %s owner to %I', r.sig, ${literal(role)});
  end loop;
end
$$`;

/**
 * Makes a started cluster match its secrets, idempotently (it runs at every start by the owning process):
 * the superuser's password rotated, the service role (login, not a superuser, no CREATEDB/CREATEROLE) with
 * its password, its database owned by it with every application object in it, and no other database
 * open to it. A cluster from an earlier version kept its data in the maintenance database `postgres`:
 * that database is renamed to the service's and a fresh `postgres` created. Returns the service URL.
 */
export async function bootstrapCluster(
  dataDir: string,
  port: number,
  secrets: EmbeddedSecrets,
): Promise<string> {
  const { user, password, database } = secrets.service;
  const su = await superuser(dataDir, port, secrets, "template1");
  try {
    const [role] = await su`select 1 as found from pg_roles where rolname = ${user}`;
    if (!role) await su.unsafe(`create role "${user}" login`);
    await su.unsafe(
      `alter role "${user}" with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${literal(password)}`,
    );
    const names = new Set(
      (await su<{ datname: string }[]>`select datname from pg_database`).map((r) => r.datname),
    );
    if (!names.has(database)) {
      if (names.has("postgres") && (await appInMaintenanceDb(dataDir, port, secrets))) {
        await su.unsafe(`alter database postgres rename to "${database}"`);
        names.delete("postgres");
      } else {
        await su.unsafe(`create database "${database}" owner "${user}"`);
      }
    }
    if (!names.has("postgres")) await su.unsafe("create database postgres");
    await su.unsafe(`alter database "${database}" owner to "${user}"`);
    await su.unsafe(`revoke all on database "${database}" from public`);
    await su.unsafe("revoke connect, temporary on database postgres from public");
    await su.unsafe("revoke connect, temporary on database template1 from public");
  } finally {
    await su.end({ timeout: 5 });
  }
  const inDb = await superuser(dataDir, port, secrets, database);
  try {
    await inDb.unsafe(TRANSFER_OWNERSHIP(user));
  } finally {
    await inDb.end({ timeout: 5 });
  }
  return clusterUrl(port, user, password, database);
}
