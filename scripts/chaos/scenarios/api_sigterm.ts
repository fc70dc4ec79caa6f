/** SIGTERM with slow imports and trickling signed PUTs in flight (issue 18.3; the disk stack: PUTs reach the API). */
import { firstSuccess, play, Recorder, startLoad } from "../load.ts";
import { BOUNDS, RECOVERY_MS, RPS } from "../settings.ts";
import { dataChecks, judge, record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";
import { startTrickles } from "./_trickles.ts";

/** Plays "API SIGTERM": every request in flight at the signal gets an answer, and the API exits 0. */
export async function apiSigterm(w: World): Promise<void> {
  const st = w.diskStack;
  const { target, scope } = await fresh(w, st);
  const r = new Recorder();
  const load = startLoad(r, target, RPS, { read: 0.5, import: 0.25, upload: 0.25, screenshot: 0 });
  await Bun.sleep(2000);
  // 10 slow imports (2.5 s) and 5 trickling PUTs: 3 finish within the 4 s grace, 2 would take 10 s.
  const slow: Promise<unknown>[] = [];
  for (let i = 0; i < 10; i++)
    slow.push(
      r.call("import", `${target.api}/api/v1/sites/${target.siteId}/media/import-url`, {
        method: "POST",
        headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${w.imgOrigin}/img.png?ms=2500&slow=${i}` }),
      }),
    );
  slow.push(...(await startTrickles(r, target, { n: 3, bytes: 512 * 1024, chunks: 10, everyMs: 150 })));
  slow.push(...(await startTrickles(r, target, { n: 2, bytes: 512 * 1024, chunks: 40, everyMs: 200 })));
  await Bun.sleep(500);
  const signalAt = performance.now();
  st.api.proc.signal("SIGTERM");
  const exit = await st.api.proc.exited(20_000);
  const stoppedMs = performance.now() - signalAt;
  await Promise.all(slow);
  const inFlight = r.recs.filter((x) => x.t0 < signalAt && x.t1 > signalAt);
  const unanswered = inFlight.filter((x) => !/^\d+$/.test(x.outcome));
  const logged = st.api.proc.output().includes('"msg":"api stopped"');
  const upMs = await st.api.start();
  const since = performance.now();
  const recovery = await firstSuccess(r, since, "read", () => play(r, target, "read"));
  await Bun.sleep(2000);
  await load.stop();
  const checks = await dataChecks(scope);
  // Requests sent after the signal may be refused (the listener is closed): not in flight.
  const judged = judge(w, r, { allowCut: true });
  for (const x of r.recs)
    if (x.t0 < signalAt && ["no answer", "timeout"].includes(x.outcome))
      judged.problems.push(`${x.kind} in flight got no answer`);
  const by = (o: string) => inFlight.filter((x) => x.outcome === o).length;
  const answeredBy = ["200", "201", "503", "504"]
    .map((o) => [o, by(o)] as const)
    .filter(([, n]) => n)
    .map(([o, n]) => `${n}×${o}`)
    .join(", ");
  record(w, {
    scenario: "API SIGTERM",
    recorder: r,
    recoveryMs: recovery,
    recoveryBound: RECOVERY_MS,
    checks,
    special:
      unanswered.length === 0 && exit === 0 && logged
        ? {
            ok: true,
            text: `${inFlight.length}/${inFlight.length} in flight answered (${answeredBy}), exit 0`,
          }
        : {
            ok: false,
            text: `${unanswered.length} of ${inFlight.length} in flight unanswered; exit ${exit}; logged ${logged}`,
          },
    notes: [
      `stopped ${stoppedMs.toFixed(0)} ms after SIGTERM (grace ${BOUNDS.SHUTDOWN_GRACE_MS} ms)`,
      `restarted in ${upMs.toFixed(0)} ms`,
    ],
    judged,
  });
}
