import { ConfigError, loadConfig, rawSetting, readServerRecord, resolvePublicBase } from "@site/config";
import { AppError } from "@site/domain/core";
import { openRuntime } from "@site/runtime";
import { flagsOf, nearest, parseFlags, UsageError } from "./admin/args.ts";
import { COMMANDS } from "./admin/commands.ts";

/**
 * `bun run admin <command> [--flag value …]`: one JSON value on stdout; errors on stderr, exit 1.
 * `--help` (or `-h`, or `help`) prints the usage on stdout with exit 0; `<command> --help` that command's.
 */
const HELP_WORDS = ["--help", "-h", "help"];

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return `usage: bun run admin <command> [--flag value …]   (JSON on stdout; errors on stderr, exit 1)

commands:
${Object.entries(COMMANDS)
  .map(([n, c]) => `  ${n.padEnd(width)}  ${c.usage}`)
  .join("\n")}

environment: the CLI uses the database and server of DATA_DIR (default ./.data; give it the server's
DATA_DIR) or DATABASE_URL. Links use PUBLIC_BASE_URL, else the base the server running on DATA_DIR
recorded (DATA_DIR/api.json), else http://HOST:PORT (default http://127.0.0.1:3000).
\`bun run admin <command> --help\` prints one command's flags.
`;
}

/** Says on stderr, without touching stdout, when the CLI is not talking to a running server's DATA_DIR. */
function noteNoServer(dataDir: string, base: string, startedDatabase: boolean): void {
  process.stderr.write(
    startedDatabase
      ? `note: no server is running on DATA_DIR=${dataDir}; this command started its embedded database itself. If the server runs with another DATA_DIR, give the CLI the same one.\n`
      : `note: no server is running on DATA_DIR=${dataDir} (no live api.json there); links use ${base}. Give the CLI the server's DATA_DIR, or set PUBLIC_BASE_URL.\n`,
  );
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (name === undefined || HELP_WORDS.includes(name)) {
    process.stdout.write(usage());
    // No command at all did nothing: the usage is the answer, but the call failed (as git does).
    return name === undefined ? 1 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const near = nearest(name, Object.keys(COMMANDS));
    process.stderr.write(
      `error: unknown command "${name}"${near ? `; did you mean "${near}"?` : ""} (usage: bun run admin --help)\n`,
    );
    return 1;
  }
  if (rest.some((a) => a === "--help" || a === "-h")) {
    process.stdout.write(`usage: bun run admin ${name} ${command.usage}\n`);
    return 0;
  }
  let rt: Awaited<ReturnType<typeof openRuntime>> | null = null;
  try {
    const flags = parseFlags(name, flagsOf(command.usage), rest);
    const config = loadConfig();
    // Links the CLI prints use the base the running server recorded (DATA_DIR/api.json), unless
    // PUBLIC_BASE_URL, PORT or HOST say otherwise: one source for this machine's public address.
    config.publicBaseUrl = resolvePublicBase(config);
    const record = readServerRecord(config.dataDir);
    const serverHere = Boolean(rawSetting(process.env, "PUBLIC_BASE_URL")) || record?.running === true;
    if (name === "server:info") {
      if (!serverHere) noteNoServer(config.dataDir, config.publicBaseUrl, false);
      process.stdout.write(
        `${JSON.stringify({
          publicBaseUrl: config.publicBaseUrl,
          url: record?.url ?? null,
          running: record?.running ?? false,
          dataDir: config.dataDir,
        })}\n`,
      );
      return 0;
    }
    rt = await openRuntime({ config, dbMax: 2 });
    if (rt.ownsEmbeddedDatabase) noteNoServer(config.dataDir, config.publicBaseUrl, true);
    else if (name === "media:share" && !serverHere) noteNoServer(config.dataDir, config.publicBaseUrl, false);
    const out = await command.run(rt, flags);
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (err) {
    const message =
      err instanceof AppError
        ? `${err.code}: ${err.message}`
        : err instanceof UsageError || err instanceof ConfigError
          ? err.message
          : String(err);
    process.stderr.write(`error: ${message}\n`);
    return 1;
  } finally {
    await rt?.close();
  }
}

process.exit(await main());
