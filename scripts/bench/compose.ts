/**
 * Compose benchmark: films the bundled demo page once per size, then re-composes it warm.
 *   bun scripts/bench/compose.ts [styleId] [rounds]
 * Prints, for 1440×900 and 2880×1800: the first compose (cold caches) and p50/min of warm re-composes
 * (same capture, a new look each time: alternating framing and chrome), plus the in-page stage split.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, createLogger, type Logger, loadConfig } from "@site/config";
import { createRenderPipeline } from "@site/render-daemon";

const style = process.argv[2] ?? "laptop-studio";
const rounds = Number(process.argv[3] ?? 10);
const demo = join(import.meta.dir, "../../apps/render-daemon/demo/lumen.html");
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(Bun.file(demo), { headers: { "content-type": "text/html" } }),
});
const dataDir = mkdtempSync(join(tmpdir(), "bench-compose-"));
const config: Config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  SECRET_KEY: "bench-compose-secret-key",
});
config.fetchAllowHosts = [`127.0.0.1:${server.port}`];

// Collect the compositor's own stage timings from its debug log lines.
const stages: Record<string, number>[] = [];
const base = createLogger("error");
const log: Logger = {
  ...base,
  debug: (msg, fields) => {
    if (msg === "composed" && fields) stages.push(fields as Record<string, number>);
  },
  child: () => log,
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
const pipeline = await createRenderPipeline({ config, log });
try {
  for (const dsf of [1, 2]) {
    const capture = await pipeline.film({
      url: `http://127.0.0.1:${server.port}/`,
      viewportWidth: 1440,
      viewportHeight: 900,
      deviceScaleFactor: dsf,
      fullPage: false,
      theme: "light",
    });
    let t = performance.now();
    const first = await pipeline.compose(capture, { styleId: style, theme: "light", host: "lumen.example" });
    const cold = performance.now() - t;
    stages.length = 0;
    const warm: number[] = [];
    for (let i = 0; i < rounds; i++) {
      t = performance.now();
      await pipeline.compose(capture, {
        styleId: style,
        theme: "light",
        host: "lumen.example",
        framing: i % 2 ? 1.1 : 1,
        chrome: i % 2 ? "dark" : "light",
      });
      warm.push(performance.now() - t);
    }
    const avg = (k: string) => (stages.reduce((s, x) => s + (x[k] ?? 0), 0) / stages.length).toFixed(0);
    console.log(
      `${first.width}x${first.height} ${style}: first ${cold.toFixed(0)} ms; warm re-compose p50 ${pct(warm, 0.5).toFixed(0)} ms, min ${Math.min(...warm).toFixed(0)} ms (in page: stage ${avg("stage")}, draw ${avg("draw")}, encode ${avg("encode")} ms); ${(first.bytes.byteLength / 1024).toFixed(0)} KB WebP`,
    );
  }
} finally {
  await pipeline.close();
  server.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
}
