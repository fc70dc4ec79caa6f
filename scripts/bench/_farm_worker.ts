// One render daemon of the farm scale bench (scripts/bench/farm_scale.ts): the real daemon (queue,
// admission, claim, completion, sweeper, the other background workers) with the stub pipeline in place of
// Chromium (decision 1503). Configured by the environment as apps/render-daemon/src/main.ts is, plus
// FARM_RUNS_FILE (a line per film, appended: how the bench finds a render run twice), FARM_FILM_MS,
// FARM_CAPTURE_BYTES and FARM_FRAME_BYTES.
import { appendFileSync } from "node:fs";
import { startRenderDaemon } from "@site/render-daemon";
import { createStubPipeline } from "@site/render-daemon/testing";
import { openRuntime } from "@site/runtime";

const num = (name: string): number | undefined => (process.env[name] ? Number(process.env[name]) : undefined);
const runsFile = process.env.FARM_RUNS_FILE;
const rt = await openRuntime({ app: "render-daemon" });
const pipeline = createStubPipeline({
  filmMs: num("FARM_FILM_MS"),
  captureBytes: num("FARM_CAPTURE_BYTES"),
  frameBytes: num("FARM_FRAME_BYTES"),
  // one short line per film, O_APPEND: lines of all workers never interleave within a line
  onFilm: runsFile ? (url) => appendFileSync(runsFile, `${process.pid} ${url}\n`) : undefined,
});
const daemon = await startRenderDaemon(rt, { pipeline, warm: false });
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    await daemon.stop();
    await rt.close();
    process.exit(0);
  });
}
console.log(`farm worker ready (pid ${process.pid})`);
