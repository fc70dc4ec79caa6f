// The farm's child processes (the API, the daemons): started with their output kept and watched.

import { join } from "node:path";
import { type Subprocess, spawn } from "bun";

const ROOT = join(import.meta.dir, "../../..");

/** A child process whose last output is kept (for the failure message) and whose lines are watched. */
export type Child = {
  proc: Subprocess;
  name: string;
  tail(): string;
  seen(text: string): boolean;
  /** Its output lines that mention `text`. */
  linesWith(text: string): string[];
};

export function startChild(name: string, cmd: string[], env: Record<string, string>): Child {
  const proc = spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    const reader = s.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += dec.decode(value);
      if (out.length > 8_000_000) out = out.slice(-4_000_000);
    }
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  return {
    proc,
    name,
    tail: () => out.slice(-3000),
    seen: (t) => out.includes(t),
    linesWith: (t) => out.split("\n").filter((l) => l.includes(t)),
  };
}

export async function waitFor(what: string, ms: number, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** SIGTERM to every child, SIGKILL to those still up after 30 s. */
export async function stopChildren(children: Child[]): Promise<void> {
  for (const c of children) c.proc.kill("SIGTERM");
  await Promise.race([Promise.all(children.map((c) => c.proc.exited)), Bun.sleep(30_000)]);
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
}
