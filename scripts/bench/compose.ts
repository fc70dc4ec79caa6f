/**
 * Compose benchmark: films the bundled demo page once per size, then composes it warm.
 *   bun scripts/bench/compose.ts [styleId] [rounds]
 * Prints, for 1440×900 and 2880×1800: the plate draw (once per look, WebGL), the full 3D reference
 * render, and p50/min of warm composes (warp + composite + JPEG encode, plates cached) cycling through
 * four looks (framing 1/1.1 × chrome light/dark), with the split of the time.
 * Targets (2-core host, no GPU): warm p50 < 120 ms at 1440×900 and < 500 ms at 2880×1800.
 * Then a fresh pipeline with an object store that holds the featured plates: time to the first
 * frame of a featured style once the daemon has warmed (target < 3 s with the film). BENCH_RESTART_ONLY=1
 * runs only that part.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, createLogger, type Logger, loadConfig } from "@site/config";
import { createRenderPipeline, type Look } from "@site/render-daemon";
import { openObjectStore } from "@site/storage";

const style = process.argv[2] ?? "laptop-studio";
const rounds = Number(process.argv[3] ?? 12);
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
const store = openObjectStore(config);
const pipeline = await createRenderPipeline({ config, log, store, warm: false });
const compositor = pipeline.compositor;
const url = `http://127.0.0.1:${server.port}/`;
try {
  for (const dsf of process.env.BENCH_RESTART_ONLY ? [] : [1, 2]) {
    const capture = await pipeline.film({
      url,
      viewportWidth: 1440,
      viewportHeight: 900,
      deviceScaleFactor: dsf,
      fullPage: false,
      theme: "light",
    });
    const looks: Look[] = [1, 1.1].flatMap((framing) =>
      (["light", "dark"] as const).map((chrome) => ({
        styleId: style,
        theme: "light" as const,
        host: "lumen.example",
        framing,
        chrome,
      })),
    );
    let t = performance.now();
    const first = await pipeline.compose(capture, looks[0]);
    const cold = performance.now() - t;
    t = performance.now();
    const plate = await (await compositor.plateJob(capture, looks[2])).draw();
    const plateMs = performance.now() - t;
    t = performance.now();
    await compositor.reference(capture, looks[0]);
    const referenceMs = performance.now() - t;
    for (const look of looks) await pipeline.compose(capture, look); // every look's plate in memory
    stages.length = 0;
    const warm: number[] = [];
    for (let i = 0; i < rounds; i++) {
      t = performance.now();
      await pipeline.compose(capture, looks[i % looks.length]);
      warm.push(performance.now() - t);
    }
    const avg = (k: string) => (stages.reduce((s, x) => s + (x[k] ?? 0), 0) / stages.length).toFixed(0);
    console.log(
      `${first.width}x${first.height} ${style}: warm compose p50 ${pct(warm, 0.5).toFixed(0)} ms, min ${Math.min(...warm).toFixed(0)} ms ` +
        `(screen image ${avg("screen")}, warp+composite ${avg("warp")}, JPEG ${avg("encode")} ms); ` +
        `first compose of a new look ${cold.toFixed(0)} ms; plate draw ${plateMs.toFixed(0)} ms (${plate.width}x${plate.height}); ` +
        `full 3D reference ${referenceMs.toFixed(0)} ms; ${(first.bytes.byteLength / 1024).toFixed(0)} KB JPEG`,
    );
  }
} finally {
  await pipeline.close();
}

// A restart: the featured plates are in the object store (shared by daemons); the first frame after start.
try {
  const warmed = await createRenderPipeline({ config, log, store, warm: true });
  await warmed.warmed?.();
  await warmed.close();
  const t0 = performance.now();
  const fresh = await createRenderPipeline({ config, log, store, warm: true });
  const started = performance.now() - t0;
  await fresh.warmed?.();
  const warmedMs = performance.now() - t0 - started;
  const t1 = performance.now();
  const capture = await fresh.film({
    url,
    viewportWidth: 1440,
    viewportHeight: 900,
    deviceScaleFactor: 1,
    fullPage: false,
    theme: "light",
  });
  const filmed = performance.now() - t1;
  const t2 = performance.now();
  await fresh.compose(capture, { styleId: "browser-float", theme: "light", host: "lumen.example" });
  const composed = performance.now() - t2;
  console.log(
    `after a restart (plates in the store): pipeline start ${started.toFixed(0)} ms, plates and film browser warm ${warmedMs.toFixed(0)} ms later; then film ${filmed.toFixed(0)} ms + first compose ${composed.toFixed(0)} ms = first render ${(filmed + composed).toFixed(0)} ms`,
  );
  await fresh.close();
} finally {
  await store.close();
  server.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
}
