import { ConfigError, loadConfig, readServerRecord, resolvePublicBase } from "@site/config";
import { AppError } from "@site/domain/core";
import { openRuntime } from "@site/runtime";
import { COMMANDS, UsageError } from "./admin/commands.ts";

/** `bun run admin <command> [--flag value …]`: one JSON object on stdout; errors on stderr, exit 1. */
function parseFlags(argv: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    if (eq > 0) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) throw new UsageError(`${arg} needs a value`);
      flags[arg.slice(2)] = next;
      i++;
    }
  }
  return flags;
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(
      `usage: bun run admin <command> [flags]\ncommands:\n${Object.entries(COMMANDS)
        .map(([n, c]) => `  ${n} ${c.usage}`)
        .join("\n")}\n`,
    );
    return 1;
  }
  let rt: Awaited<ReturnType<typeof openRuntime>> | null = null;
  try {
    const flags = parseFlags(rest);
    const config = loadConfig();
    // Links the CLI prints use the base the running server recorded (DATA_DIR/api.json), unless
    // PUBLIC_BASE_URL says otherwise: one source for this machine's public address.
    config.publicBaseUrl = resolvePublicBase(config);
    if (name === "server:info") {
      const record = readServerRecord(config.dataDir);
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
