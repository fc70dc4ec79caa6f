import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "@site/browser/testing";
import { createTestDatabase } from "@site/db/testing";
import { CLIP_TEMP_PREFIX } from "./render_clip.ts";

// Issue 38, "Bytes without a row": a SIGKILLed daemon left its partial clip.mp4 in its temp folder for
// good. A clip's folder is owned by its process (pid and start time); a render daemon removes those of
// dead processes when it starts (decision 1422). Real processes: the smallest one that owns a clip folder
// the way renderClip does (createOwnedDir, then FFmpeg's output growing in it), SIGKILLed mid-write, and
// the real render daemon (`bun apps/render-daemon/src/main.ts`) started after it on the same temp folder.

const OWNER = `
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { createOwnedDir } from "@site/browser";
import { CLIP_TEMP_PREFIX } from "./apps/render-daemon/src/clip/render_clip.ts";
const dir = createOwnedDir(CLIP_TEMP_PREFIX);
appendFileSync(join(dir, "clip.mp4"), new Uint8Array(64 * 1024));
console.log(dir);
// an encode in progress: the file grows until the process is killed
setInterval(() => appendFileSync(join(dir, "clip.mp4"), new Uint8Array(4096)), 50);
`;

let root: string;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
const procs: ReturnType<typeof Bun.spawn>[] = [];
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "clip-kill-"));
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  await db.close();
  rmSync(root, { recursive: true, force: true });
});

/** A process owning a clip folder under `root`, writing its clip.mp4; resolves with the folder. */
async function owner(): Promise<{ proc: ReturnType<typeof Bun.spawn>; dir: string }> {
  const proc = Bun.spawn(["bun", "-e", OWNER], {
    cwd: join(import.meta.dir, "../../../.."),
    env: { ...process.env, TMPDIR: root },
    stdout: "pipe",
    stderr: "inherit",
  });
  procs.push(proc);
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the owner exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, dir: text.trim() };
}

describe("a clip's temp folder after its daemon is SIGKILLed", () => {
  test("the restarted daemon removes the dead owner's folder and its partial clip.mp4, and leaves a live one's", async () => {
    const killed = await owner();
    const live = await owner();
    expect(killed.dir.startsWith(join(root, CLIP_TEMP_PREFIX))).toBe(true);
    await until(async () => statSync(join(killed.dir, "clip.mp4")).size > 64 * 1024, 10_000);
    killed.proc.kill("SIGKILL");
    await killed.proc.exited;
    // Left behind: nothing in the killed process ran its clean-up.
    expect(existsSync(join(killed.dir, "clip.mp4"))).toBe(true);

    // The daemon restarts (no Chromium here: it takes no jobs, but clears what a previous run left).
    const logs: string[] = [];
    const daemon = Bun.spawn(["bun", "apps/render-daemon/src/main.ts"], {
      cwd: join(import.meta.dir, "../../../.."),
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? root,
        TMPDIR: root,
        DATABASE_URL: db.url,
        SECRET_KEY: "test-secret-key-0123456789",
        DATA_DIR: join(root, "data"),
        CHROMIUM_PATH: join(root, "no-chromium"),
        LOG_LEVEL: "info",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    procs.push(daemon);
    void (async () => {
      const reader = (daemon.stderr as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        logs.push(new TextDecoder().decode(value));
      }
    })();
    await until(async () => !existsSync(killed.dir), 60_000);
    await until(async () => logs.join("").includes("render daemon"), 60_000);
    expect(existsSync(join(live.dir, "clip.mp4"))).toBe(true);
    expect(readdirSync(root).filter((n) => n.startsWith(CLIP_TEMP_PREFIX))).toEqual([
      live.dir.slice(root.length + 1),
    ]);
    expect(logs.join("")).toContain("removed temporary clip folders left by a previous run");
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
  }, 120_000);
});
