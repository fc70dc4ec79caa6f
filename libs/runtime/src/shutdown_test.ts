import { expect, test } from "bun:test";
import { join } from "node:path";

const child = join(import.meta.dir, "../testing/shutdown_child.ts");

/** Reads a child's stdout until `line` appears; everything read so far. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, line: string, seen: string[]) {
  const dec = new TextDecoder();
  while (!seen.join("").includes(`${line}\n`)) {
    const { done, value } = await reader.read();
    if (done) break;
    seen.push(dec.decode(value, { stream: true }));
  }
  return seen.join("");
}

for (const first of ["SIGTERM", "SIGINT"] as const) {
  test(`${first}: the app stops once, then the runtime closes, then exit 0; a second signal runs nothing again`, async () => {
    const proc = Bun.spawn(["bun", child], { stdout: "pipe", stderr: "pipe" });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    const seen: string[] = [];
    expect(await readUntil(reader, "ready", seen)).toContain("stopping before a signal: false");
    proc.kill(first);
    await readUntil(reader, "app stop, stopping: true", seen);
    proc.kill("SIGTERM"); // while the app stops: ignored
    expect(await proc.exited).toBe(0);
    await readUntil(reader, "runtime closed", seen);
    const out = seen.join("");
    expect(out.match(/app stop,/g)).toHaveLength(1);
    expect(out.indexOf("app stopped")).toBeLessThan(out.indexOf("runtime closed"));
    const logged = await new Response(proc.stderr as ReadableStream).text();
    expect(logged).toContain('"msg":"test child stopping"');
    expect(logged).toContain(`"signal":"${first}"`);
    expect(logged).toContain('"msg":"test child stopped"');
  });
}
