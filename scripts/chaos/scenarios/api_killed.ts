/** The API SIGKILLed with imports and uploads in flight (signed PUTs through it on the disk stack). */
import { na, tempFiles } from "../checks.ts";
import { firstSuccess, play, Recorder, startLoad } from "../load.ts";
import { RECOVERY_MS, RPS } from "../settings.ts";
import { dataChecks, judge, record } from "../verdict.ts";
import { fresh, type Stack, type World } from "../world.ts";
import { startTrickles } from "./_trickles.ts";

/** Plays "API killed (S3)" or "API killed (disk)": restarted, it serves again and leaves no half file. */
export async function apiKilled(w: World, scenario: string, st: Stack): Promise<void> {
  const { target, scope } = await fresh(w, st);
  target.imageUrl = (n) => `${w.imgOrigin}/img.png?ms=1500&n=${n}`;
  const r = new Recorder();
  const load = startLoad(r, target, RPS, { read: 0.3, import: 0.35, upload: 0.35, screenshot: 0 });
  await Bun.sleep(3000);
  // Trickling PUTs through the API (disk) so some are half-written at the kill.
  const trickles =
    st.name === "disk"
      ? await startTrickles(r, target, { n: 3, bytes: 1024 * 1024, chunks: 40, everyMs: 100 })
      : [];
  await Bun.sleep(800);
  const inTmp = tempFiles(scope);
  await st.api.proc.kill();
  const upMs = await st.api.start();
  const since = performance.now();
  const recovery = await firstSuccess(r, since, "read", () => play(r, target, "read"));
  await Bun.sleep(3000);
  await load.stop();
  await Promise.all(trickles);
  const checks = await dataChecks(scope);
  record(w, {
    scenario,
    recorder: r,
    recoveryMs: recovery,
    recoveryBound: RECOVERY_MS,
    checks,
    special: na(),
    notes: [
      `restarted API served after ${upMs.toFixed(0)} ms`,
      ...(st.name === "disk" ? [`${inTmp} temporary files at the kill`] : []),
    ],
    judged: judge(w, r, { allowCut: true }),
  });
}
