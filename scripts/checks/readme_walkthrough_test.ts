import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { TOOLS } from "@site/api";
import { type ApiProcess, spawnApi } from "@site/api/testing";
import { createTestDatabase } from "@site/db/testing";
import { type FakePlatforms, startFakeImageApi, startFakePlatforms } from "@site/social/testing";

// The README runs as written (issue 29 item 1; decision 0751): its ```sh blocks, in order, in one bash
// with `set -euo pipefail`, against the API started as users start it (`bun run apps/api`) on its own
// DATA_DIR and a free PORT, as a newcomer pastes them. A block preceded by
// `<!-- readme-test: skip (why) -->` is not run (the README says why: it needs the internet, a
// platform account, or it starts the server); every other block runs. `curl` fails on an HTTP error
// (--fail-with-body), so a step that answers 4xx/5xx stops the walk-through with its error body.

const ROOT = resolve(import.meta.dir, "../..");
const README = join(ROOT, "README.md");

/** A shell block of the README: its first line number, its text, and why it is skipped (if it is). */
type Block = { line: number; code: string; skip: string | null };

/** The README's ```sh and ```bash blocks in order, each with the skip marker just above it, if any. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (open[1] === "sh" || open[1] === "bash") {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === "") above--;
      const marker = /<!--\s*readme-test:\s*skip\s*\(([^)]*)\)\s*-->/.exec(lines[above] ?? "");
      blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join("\n"), skip: marker?.[1] ?? null });
    }
    i = end;
  }
  return blocks;
}

/** A free loopback port (bound, then released). */
function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let fake: FakePlatforms;
let images: ReturnType<typeof startFakeImageApi>;
let api: ApiProcess;
let work: string;
let dataDir: string;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase();
  // The platforms and the image model the walk-through talks to, on loopback (SOCIAL_API_BASE_*, IMAGE_API_BASE).
  fake = startFakePlatforms();
  images = startFakeImageApi();
  // A newcomer's folder: the checkout's files, and whatever the walk-through writes stays out of the repo.
  work = mkdtempSync(join(tmpdir(), "readme-walk-"));
  for (const name of readdirSync(ROOT))
    if (![".git", ".data"].includes(name)) symlinkSync(join(ROOT, name), join(work, name));
  dataDir = join(work, "data");
  port = freePort();
  api = await spawnApi({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: "warn",
    ...fake.env,
    ...images.env,
  });
}, 60_000);

afterAll(async () => {
  await api?.kill();
  fake?.close();
  images?.close();
  await db?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the README walk-through", () => {
  test("its shell blocks run in order against a started server, as written", async () => {
    expect(api.url).toBe(`http://127.0.0.1:${port}`);
    const blocks = shellBlocks(readFileSync(README, "utf8"));
    const run = blocks.filter((b) => b.skip === null);
    expect(run.length).toBeGreaterThan(8);
    for (const b of blocks.filter((x) => x.skip !== null))
      expect(b.skip!.length, `README.md:${b.line} says why it is skipped`).toBeGreaterThan(5);
    const script = [
      "set -euo pipefail",
      // An HTTP error stops the walk-through and shows its body (what a newcomer would have seen).
      'curl() { command curl --fail-with-body "$@"; }',
      ...run.map((b) => `echo "::: README.md:${b.line}" >&2\n${b.code}`),
      'echo "::: done" >&2',
    ].join("\n");
    const proc = Bun.spawn(["bash", "-c", script], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: work,
        // The walk-through's own `export DATA_DIR=…`: the CLI joins the server of this folder.
        DATA_DIR: dataDir,
        DATABASE_URL: db.url,
        SECRET_KEY: "test-secret-key-0123456789",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill(), 80_000);
    const [out, err] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
    ]);
    const code = await proc.exited;
    clearTimeout(timer);
    const last = err.match(/::: README\.md:\d+/g)?.at(-1) ?? "(before the first block)";
    expect(
      code,
      `the walk-through stopped in the block at ${last}\n--- stdout (tail)\n${out.slice(-3000)}\n--- stderr (tail)\n${err.slice(-3000)}\n--- server\n${api.logs().slice(-2000)}`,
    ).toBe(0);
    expect(err).toContain("::: done");
    // A jq path that names nothing prints `null`: every value the README picks out exists.
    expect(
      out.split("\n").filter((l) => l.trim() === "null"),
      out.slice(-3000),
    ).toEqual([]);
    // What the README says the steps answer.
    expect(out).toContain('"status": "sent"');
    expect(out).toContain("Subscription confirmed");
  }, 90_000);

  test("the MCP section names every tool there is, and no other; the layout tool takes ifMatch", () => {
    const readme = readFileSync(README, "utf8");
    const section = readme.slice(
      readme.indexOf("## AI agents: the MCP server"),
      readme.indexOf("\n## Configuration"),
    );
    const bullets = section.slice(section.indexOf("\n- "), section.indexOf("\n\n", section.indexOf("\n- ")));
    const named = new Set([...bullets.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]));
    expect(named).toEqual(new Set(TOOLS.map((t) => t.name)));
    expect(bullets).toContain("`update_site_layout` (pass the etag as `ifMatch`)");
  });
});
