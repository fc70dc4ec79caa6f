/** 20 concurrent imports of a URL that never answers, under MEDIA_DAILY_FETCH_ATTEMPT_LIMIT=5 (issue 18.1). */
import { Recorder, startLoad } from "../load.ts";
import { createApp, freePort, until } from "../services.ts";
import { RPS } from "../settings.ts";
import { dataChecks, record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";

/** Plays "fetch limit" on an API of the s3 stack of its own: 5 reach the host, 15 answer 429. */
export async function fetchLimit(w: World): Promise<void> {
  const st = w.s3Stack;
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = createApp(
    "s3-api-limit5",
    "apps/api",
    { ...st.env, PORT: String(port), MEDIA_DAILY_FETCH_ATTEMPT_LIMIT: "5" },
    w.logDir,
    () => until("API /healthz", async () => (await fetch(`${url}/healthz`)).status === 200, 60_000),
  );
  w.procs.push(api.proc);
  await api.start();
  const { target, scope } = await fresh(w, st, url);
  const r = new Recorder();
  const load = startLoad(r, target, RPS, { read: 0.7, import: 0, upload: 0.3, screenshot: 0 });
  const before = w.hits.get("/never") ?? 0;
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      r.call("import", `${url}/api/v1/sites/${target.siteId}/media/import-url`, {
        method: "POST",
        headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${w.imgOrigin}/never?i=${i}` }),
      }),
    ),
  );
  const reached = (w.hits.get("/never") ?? 0) - before;
  await load.stop();
  const imports = r.recs.filter((x) => x.kind === "import");
  const n = (o: string) => imports.filter((x) => x.outcome === o).length;
  const checks = await dataChecks(scope);
  api.proc.signal("SIGTERM");
  await api.proc.exited(10_000);
  const text = `${reached} of 20 reached the host (${n("504")}×504, ${n("429")}×429)`;
  record(w, {
    scenario: "fetch limit",
    recorder: r,
    recoveryMs: null,
    recoveryBound: null,
    checks,
    special: { ok: reached === 5 && n("429") === 15, text },
    notes: [],
  });
}
