// Decoding a user's image happens in a child process, never on the API's event loop or heap (issue 38):
// Bun's Worker ignores `resourceLimits` (checked on Bun 1.4: a worker limited to 64 MB allocated 3 GB),
// and Skia's pixel buffers are native memory no JS heap limit would count anyway. The child runs under
// RLIMIT_DATA (setrlimit(2), "ulimit -d" in POSIX sh), which caps its anonymous memory: an allocation
// past it fails in the child, which exits; the API answers 400 and keeps serving. The header check
// (pixelRefusal, MEDIA_MAX_PIXELS) comes first, so the limit only stands behind it.

/**
 * The child's memory limit (RLIMIT_DATA counts address space the allocators reserve, not only what they
 * touch): 2 GiB, or 48 bytes a pixel for a larger MEDIA_MAX_PIXELS. Measured here: a 6324×6324 PNG
 * (40 M pixels) converts under 1 GiB, 1.5 GiB and 2 GiB but not under 1.25 GiB (the allocator's arenas),
 * so the limit keeps a wide margin above the largest image allowed.
 */
export function convertMemoryBytes(maxPixels: number): number {
  return Math.max(2 * 1024 ** 3, maxPixels * 48);
}

/** How long one conversion may take before the child is killed. */
export const CONVERT_TIMEOUT_MS = 60_000;

/** Conversions one API process runs at once (each child may hold convertMemoryBytes); the rest wait. */
export const CONVERT_CONCURRENCY = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= CONVERT_CONCURRENCY) await new Promise<void>((r) => waiting.push(r));
  else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** Why a conversion did not give a JPEG (the child's own words, for the log). */
export class ConvertError extends Error {}

/**
 * Decodes an image and re-encodes it as JPEG (quality 90, transparency over white) in a child process
 * limited to `memoryBytes` and CONVERT_TIMEOUT_MS, at most CONVERT_CONCURRENCY at once. Rejects with
 * ConvertError when the child fails.
 */
export function convertToJpeg(
  bytes: Uint8Array,
  opts: { memoryBytes: number; timeoutMs?: number },
): Promise<{ jpeg: Uint8Array; width: number; height: number }> {
  return slot(() => convertInChild(bytes, opts));
}

async function convertInChild(
  bytes: Uint8Array,
  opts: { memoryBytes: number; timeoutMs?: number },
): Promise<{ jpeg: Uint8Array; width: number; height: number }> {
  const script = new URL("./jpeg_convert_main.ts", import.meta.url).pathname;
  const kb = String(Math.ceil(opts.memoryBytes / 1024));
  const child = Bun.spawn(
    ["sh", "-c", 'ulimit -d "$1" && shift && exec "$@"', "jpeg-convert", kb, process.execPath, script],
    {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      // Nothing of the API's environment (its secrets) reaches the child.
      env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin" },
    },
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? CONVERT_TIMEOUT_MS);
  try {
    child.stdin.write(bytes);
    await child.stdin.end();
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).arrayBuffer(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    if (code !== 0 || out.byteLength < 8)
      throw new ConvertError(err.trim() || `the converter exited with ${child.signalCode ?? code}`);
    const v = new DataView(out);
    return { width: v.getUint32(0), height: v.getUint32(4), jpeg: new Uint8Array(out, 8) };
  } finally {
    clearTimeout(timer);
  }
}
