/** The render daemon SIGKILLed with renders in progress, then restarted (issue 18.4 and 18.6). */
import { orphans } from "../checks.ts";
import { Recorder, startLoad } from "../load.ts";
import { until } from "../services.ts";
import { RENDER_RECOVERY_MS, RPS } from "../settings.ts";
import { dataChecks, record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";

/**
 * Plays "daemon killed": its browsers go with it (they talk over a pipe that closes), the renders it
 * held run again on a new try after the restart, and both are done in the end.
 */
export async function daemonKilled(w: World): Promise<void> {
  const st = w.s3Stack;
  const { target, scope } = await fresh(w, st);
  const r = new Recorder();
  const load = startLoad(r, target, RPS, { read: 0.8, import: 0.1, upload: 0.1, screenshot: 0 });
  // Two renders of a page that takes 4 s to answer: both in progress when the daemon dies.
  const before = w.hits.get("/slow") ?? 0;
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const out = await r.call("screenshot", `${target.api}/api/v1/sites/${target.siteId}/media/screenshot`, {
      method: "POST",
      headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: `${w.pageOrigin}/slow?ms=4000&i=${i}`,
        viewportWidth: 800,
        viewportHeight: 500,
      }),
    });
    if (out?.res.status === 202) ids.push(out.json.renderId);
  }
  await until("both renders filming", () => (w.hits.get("/slow") ?? 0) >= before + ids.length, 60_000);
  const attempts = async () =>
    scope.sql<{ id: string; status: string; attempts: number }[]>`
        select id, status, attempts from screenshot_renders where id in ${scope.sql(ids)} order by id`;
  const atKill = await attempts();
  const killedPid = st.daemon.proc.pid;
  await st.daemon.proc.kill();
  // Its browsers talk over a pipe that closes with it: they should go by themselves, before any restart.
  const killedAt = performance.now();
  const leftAfterKill = orphans(scope);
  let goneMs: number | null = null;
  await until(
    "browsers of the killed daemon gone",
    () => {
      if (orphans(scope) > 0) return false;
      goneMs = performance.now() - killedAt;
      return true;
    },
    10_000,
  ).catch(() => {});
  const upMs = await st.daemon.start();
  const since = performance.now();
  let recovery: number | null = null;
  await until(
    "renders running again",
    async () => {
      const now = await attempts();
      const again = now.every((x, i) => x.attempts > atKill[i]!.attempts || x.status === "done");
      if (again) recovery = performance.now() - since;
      return again;
    },
    30_000,
  ).catch(() => {});
  await Bun.sleep(1000);
  await load.stop();
  const checks = await dataChecks(scope);
  const final = await attempts();
  const done = final.filter((x) => x.status === "done").length;
  record(w, {
    scenario: "daemon killed",
    recorder: r,
    recoveryMs: recovery,
    recoveryBound: RENDER_RECOVERY_MS,
    checks,
    special:
      done === ids.length && ids.length === 2
        ? { ok: true, text: `${done}/2 renders done` }
        : { ok: false, text: `${done}/${ids.length} renders done (${final.map((x) => x.status).join(",")})` },
    notes: [
      `killed daemon pid ${killedPid}: ${leftAfterKill} of its Chromium processes alive just after the kill, ${
        goneMs === null
          ? `${orphans(scope)} still alive 10 s later (the restart's sweep must kill them)`
          : `all gone ${(goneMs as number).toFixed(0)} ms after it, before the restart`
      }`,
      `restarted daemon took jobs after ${upMs.toFixed(0)} ms; recovery = renders on a new try after that`,
    ],
  });
}
