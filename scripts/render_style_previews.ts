/**
 * Renders every screenshot style's preview with the real pipeline, filming the bundled demo page
 * (apps/render-daemon/demo/lumen.html, presented as lumen.example) served on 127.0.0.1.
 *   bun scripts/render_style_previews.ts            → apps/api/assets/style-previews/<id>.webp (960 px, small)
 *   bun scripts/render_style_previews.ts --docs     → also docs/screenshots/<id>-<theme>.webp at full size
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { listStyles, PREVIEW_SOURCE_HOST, type ScreenshotStyle } from "@site/domain/screenshots";
import { type Capture, createRenderPipeline, reencode } from "@site/render-daemon";

const root = join(import.meta.dir, "..");
const demo = join(root, "apps/render-daemon/demo/lumen.html");
const outDir = join(root, "apps/api/assets/style-previews");
const docsDir = join(root, "docs/screenshots");
const docs = process.argv.includes("--docs");
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));

/** Styles whose preview shows the dark variant (their mood is dark). */
const DARK_PREVIEW = new Set(["laptop-midnight", "monitor-night"]);

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(Bun.file(demo), { headers: { "content-type": "text/html" } }),
});
const dataDir = mkdtempSync(join(tmpdir(), "previews-"));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, SECRET_KEY: "preview-render-secret-key" });
config.fetchAllowHosts = [`127.0.0.1:${server.port}`];
const pipeline = await createRenderPipeline({ config, log: createLogger("warn") });
mkdirSync(outDir, { recursive: true });
if (docs) mkdirSync(docsDir, { recursive: true });

const captures = new Map<string, Capture>();
async function film(style: ScreenshotStyle, theme: "light" | "dark"): Promise<Capture> {
  const vp = style.look.viewport ?? { width: 1440, height: 900, deviceScaleFactor: 1 };
  const k = `${vp.width}x${vp.height}@${vp.deviceScaleFactor}/${theme}`;
  let cap = captures.get(k);
  if (!cap) {
    cap = await pipeline.film({
      url: `http://127.0.0.1:${server.port}/`,
      viewportWidth: vp.width,
      viewportHeight: vp.height,
      deviceScaleFactor: vp.deviceScaleFactor,
      fullPage: false,
      theme,
    });
    captures.set(k, cap);
  }
  return cap;
}

try {
  for (const style of listStyles({ limit: 100 })) {
    if (only.length > 0 && !only.includes(style.id)) continue;
    const theme = DARK_PREVIEW.has(style.id) ? "dark" : "light";
    const started = performance.now();
    const frame = await pipeline.compose(await film(style, theme), {
      styleId: style.id,
      theme,
      host: PREVIEW_SOURCE_HOST,
    });
    const small = await reencode(frame.bytes, { format: "webp", width: 960, quality: 88 });
    await Bun.write(join(outDir, `${style.id}.webp`), small.bytes);
    if (docs) {
      const full = await reencode(frame.bytes, { format: "webp", quality: 88 });
      await Bun.write(join(docsDir, `${style.id}-${theme}.webp`), full.bytes);
    }
    const ms = Math.round(performance.now() - started);
    console.log(
      `${style.id}\t${theme}\t${small.width}x${small.height}\t${(small.bytes.byteLength / 1024).toFixed(1)} KB\t${ms} ms`,
    );
  }
} finally {
  await pipeline.close();
  server.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
}
