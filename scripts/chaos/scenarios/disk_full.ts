/** The disk stack's storage full (its tmpfs filled) under imports, PUTs and a render; then freed (issue 18.2). */
import { execSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { sampleImage } from "@site/domain/testing";
import { firstSuccess, play, Recorder, startLoad } from "../load.ts";
import { until } from "../services.ts";
import { RECOVERY_MS, RPS } from "../settings.ts";
import { dataChecks, noChecks, record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";

/**
 * Plays "disk full": writes are refused 503/507 with Retry-After, /readyz names storage, the render
 * whose frame cannot be stored fails with a sentence (no errno, no path), and imports recover once freed.
 * Not played without a tmpfs (mounting needs root); outages_test.ts covers it with a failing store.
 */
export async function diskFull(w: World): Promise<void> {
  const st = w.diskStack;
  if (!w.tmpfs) {
    record(w, {
      scenario: "disk full",
      recorder: new Recorder(),
      recoveryMs: null,
      recoveryBound: null,
      checks: noChecks(),
      special: {
        ok: null,
        text: "not played: no tmpfs (mount needs root); outages_test.ts covers it with a failing store",
      },
      notes: [],
    });
    return;
  }
  await st.daemon.start();
  try {
    const { target, scope } = await fresh(w, st);
    target.uploadBytes = sampleImage("png", { width: 16, height: 16, size: 200_000 });
    const r = new Recorder();
    const load = startLoad(r, target, RPS, { read: 0.4, import: 0.3, upload: 0.3, screenshot: 0 });
    await Bun.sleep(2000);
    // Fill the tmpfs to the last byte.
    const filler = join(w.diskDir, "filler");
    execSync(`dd if=/dev/zero of=${filler} bs=1M 2>/dev/null || true`);
    execSync(`dd if=/dev/zero of=${filler}-tail bs=4k 2>/dev/null || true`);
    const fullAt = performance.now();
    // A render whose frame cannot be stored.
    const shot = await r.call("screenshot", `${target.api}/api/v1/sites/${target.siteId}/media/screenshot`, {
      method: "POST",
      headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${w.pageOrigin}/page?full=1`, viewportWidth: 800, viewportHeight: 500 }),
    });
    const renderId = shot?.res.status === 202 ? (shot.json.renderId as string) : null;
    const rendered = renderId
      ? await until(
          "render settled",
          async () => {
            const [x] = await scope.sql<{ status: string; error: string | null }[]>`
              select status, error from screenshot_renders where id = ${renderId}`;
            return x && x.status !== "pending" ? x : null;
          },
          90_000,
        ).catch(() => null)
      : null;
    await Bun.sleep(Math.max(0, 6000 - (performance.now() - fullAt)));
    const ready = await r.call("readyz", `${target.api}/readyz`);
    rmSync(filler, { force: true });
    rmSync(`${filler}-tail`, { force: true });
    const since = performance.now();
    const recovery = await firstSuccess(r, since, "import", () => play(r, target, "import"));
    await Bun.sleep(3000);
    await load.stop();
    const checks = await dataChecks(scope);
    const whileFull = r.recs.filter(
      (x) => x.t0 >= fullAt && x.t1 <= since && ["import", "put"].includes(x.kind),
    );
    const refused = whileFull.filter((x) => ["503", "507"].includes(x.outcome)).length;
    const sentence =
      rendered?.status === "failed" &&
      !!rendered.error &&
      !/E[A-Z]{3,}|errno|\/[a-z]|\bat\s+\S+\s\(/.test(rendered.error);
    const readyNamesStorage = ready?.res.status === 503 && /storage/.test(ready.text);
    const problems: string[] = [];
    if (!refused) problems.push("no import or PUT was refused 503/507 while full");
    if (!sentence) problems.push(`render ${rendered?.status ?? "never settled"}: ${rendered?.error ?? "-"}`);
    if (!readyNamesStorage) problems.push(`/readyz ${ready?.res.status}`);
    record(w, {
      scenario: "disk full",
      recorder: r,
      recoveryMs: recovery,
      recoveryBound: RECOVERY_MS,
      checks,
      special: problems.length
        ? { ok: false, text: problems.join("; ") }
        : { ok: true, text: `${refused} refused 503/507; /readyz 503 storage; render error a sentence` },
      notes: [`tmpfs 48 MiB filled; render error: "${rendered?.error ?? "-"}"`],
    });
  } finally {
    st.daemon.proc.signal("SIGTERM");
    await st.daemon.proc.exited(40_000);
    await st.daemon.proc.kill();
  }
}
