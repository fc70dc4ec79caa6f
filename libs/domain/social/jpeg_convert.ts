// Decoding a user's image happens in a child process, never on the API's event loop or heap (issue 38):
// Bun's Worker ignores `resourceLimits` (checked on Bun 1.4: a worker limited to 64 MB allocated 3 GB),
// and Skia's pixel buffers are native memory no JS heap limit would count anyway. The child runs under
// RLIMIT_DATA (setrlimit(2), "ulimit -d" in POSIX sh), which caps its anonymous memory: an allocation
// past it fails in the child, which exits; the API answers 400 and keeps serving. The header check
// (pixelRefusal, MEDIA_MAX_PIXELS) comes first, so the limit only stands behind it.

/** The child's memory limit: its runtime (256 MiB) plus three RGBA buffers of the largest image allowed. */
export function convertMemoryBytes(maxPixels: number): number {
  return 256 * 1024 * 1024 + maxPixels * 4 * 3;
}

/** How long one conversion may take before the child is killed. */
export const CONVERT_TIMEOUT_MS = 60_000;

/** Why a conversion did not give a JPEG (the child's own words, for the log). */
export class ConvertError extends Error {}

/**
 * Decodes an image and re-encodes it as JPEG (quality 90, transparency over white) in a child process
 * limited to `memoryBytes` and CONVERT_TIMEOUT_MS. Rejects with ConvertError when the child fails.
 */
export async function convertToJpeg(
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
