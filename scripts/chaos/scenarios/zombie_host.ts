/**
 * A waking zombie host (issue 38, decision 1440): the daemon frozen (SIGSTOP) while it composes a clip, a
 * second daemon takes the job once the frozen one's lock lapsed (RENDER_JOB_LOCK_MS, 2 s here) and
 * finishes the clip (or works on it for 45 s), then the frozen daemon is woken (SIGCONT) and goes on with a
 * clip it no longer owns: one video, one poster, one charge.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createApiKey, createMember, createOrganization } from "@site/domain/core";
import type { Check, Scope } from "../checks.ts";
import { na, orphans } from "../checks.ts";
import { Recorder, startLoad } from "../load.ts";
import { createApp, freePort, until } from "../services.ts";
import { RPS } from "../settings.ts";
import { record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";

/** The clip's organization: its social library's rows, objects and counted bytes, and its ledger. */
async function clipChecks(scope: Scope, orgId: string, clipId: string) {
  const rows = await scope.sql<{ key: string; kind: string; size: string }[]>`
    select key, kind, size::text from social_media where org_id = ${orgId}`;
  const stored = new Map<string, number>();
  for await (const o of scope.store.list(`social-media/${orgId}/`)) stored.set(o.key, o.size);
  const diff: string[] = [];
  for (const r of rows) if (stored.get(r.key) !== Number(r.size)) diff.push(`row ${r.key} not stored`);
  for (const k of stored.keys()) if (!rows.some((r) => r.key === k)) diff.push(`stored, no row ${k}`);
  const [org] = await scope.sql<{ used: string; credits: number; sum: number }[]>`
    select storage_used_bytes::text as used, credits,
      coalesce((select sum(delta)::int from credit_ledger where org_id = o.id), 0) as sum
    from organizations o where o.id = ${orgId}`;
  const [clip] = await scope.sql<{ status: string; debits: number; refunds: number }[]>`
    select status,
      (select count(*)::int from credit_ledger where subject_id = r.id and reason = 'clip_debit') as debits,
      (select count(*)::int from credit_ledger where subject_id = r.id and reason = 'clip_refund') as refunds
    from screenshot_renders r where r.id = ${clipId}`;
  const listedBytes = rows.reduce((n, r) => n + Number(r.size), 0);
  const videos = rows.filter((r) => r.kind === "video").length;
  const posters = rows.filter((r) => r.kind === "image").length;
  const files: Check = diff.length
    ? { ok: false, text: `${diff.length} differ: ${diff.slice(0, 2).join("; ")}` }
    : { ok: true, text: `${rows.length} files` };
  const quota: Check =
    Number(org?.used) === listedBytes
      ? { ok: true, text: `${listedBytes} B` }
      : { ok: false, text: `counted ${org?.used} B, listed ${listedBytes} B` };
  const ledger: Check =
    org && org.credits === org.sum && clip?.debits === 1 && clip.refunds === 0
      ? { ok: true, text: "1 clip, charged once" }
      : { ok: false, text: `clip ${clip?.status}, debited ${clip?.debits}×, refunded ${clip?.refunds}×` };
  const special: Check =
    clip?.status === "done" && videos === 1 && posters === 1
      ? { ok: true, text: "1 video, 1 poster listed; charged once" }
      : { ok: false, text: `clip ${clip?.status}: ${videos} videos, ${posters} posters listed` };
  return { files, quota, ledger, special };
}

/** Plays "zombie host" on the s3 stack: its daemon frozen mid-clip, a second daemon, then the wake. */
export async function zombieHost(w: World): Promise<void> {
  const st = w.s3Stack;
  const { target, scope } = await fresh(w, st);
  // The clip's own organization, with a key that may make clips.
  const org = await createOrganization(st.ctx, { name: "Chaos clips", credits: 1000 });
  const user = await createMember(st.ctx, {
    orgId: org.id,
    email: `zombie-${Math.random().toString(36).slice(2)}@example.test`,
    role: "owner",
  });
  const { key } = await createApiKey(st.ctx, { orgId: org.id, userId: user.id, scopes: ["social:write"] });
  const r = new Recorder();
  const load = startLoad(r, target, RPS, { read: 0.8, import: 0.1, upload: 0.1, screenshot: 0 });
  const res = await fetch(`${st.apiUrl}/api/v1/social/media/clips`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      url: `${w.pageOrigin}/zombie`,
      motion: "scroll",
      durationS: 2,
      fps: 24,
      width: 320,
      height: 400,
      viewportWidth: 480,
      viewportHeight: 600,
    }),
  });
  const clipId = res.status === 202 ? ((await res.json()) as { clipId: string }).clipId : null;
  const notes: string[] = [];
  const statusOf = async () =>
    clipId
      ? (
          await scope.sql<{ status: string; attempts: number; stage: string | null }[]>`
            select status, attempts, stage from screenshot_renders where id = ${clipId}`
        )[0]
      : undefined;
  // A second daemon on the same stack, started only for this scenario.
  const bTmp = join(w.dir, "s3-daemon-b-tmp");
  mkdirSync(bTmp, { recursive: true });
  const b = createApp(
    "s3-daemon-b",
    "apps/render-daemon",
    { ...st.env, TMPDIR: bTmp, RENDER_METRICS_PORT: String(freePort()) },
    w.logDir,
    (p, since) =>
      until(
        "daemon B taking jobs",
        () => p.output().slice(since).includes("render daemon taking jobs"),
        90_000,
      ),
  );
  w.procs.push(b.proc);
  const a = st.daemon.proc;
  // The whole process group (the daemon and its FFmpeg), as a paused host would be.
  const signalA = (sig: NodeJS.Signals) => {
    if (a.running) process.kill(-a.pid, sig);
  };
  let frozen = false;
  let lateTry = "did not end" as "listed nothing" | "listed" | "failed before listing" | "did not end";
  try {
    if (!clipId) throw new Error(`the clip was not queued (${res.status})`);
    await until(
      "the clip begun on the first daemon",
      async () => ((await statusOf())?.attempts ?? 0) > 0,
      60_000,
    );
    // The second daemon starts while the first films (it takes no job while the first holds it), so
    // that the freeze stays short of the first's job timeout on a busy host.
    await b.start();
    await until(
      "the first daemon composing the clip",
      async () => (await statusOf())?.stage === "compose",
      120_000,
    );
    signalA("SIGSTOP");
    frozen = true;
    const frozenAt = performance.now();
    // Woken once the second daemon finished the clip, or after 45 s frozen while it still works on it
    // (the first's job timeout, 120 s, counts the freeze: a try woken past it never reaches the listing).
    await until("the second daemon's try begun", async () => ((await statusOf())?.attempts ?? 0) > 1, 60_000);
    const finished = await until(
      "the clip done by the second daemon",
      async () => (await statusOf())?.status === "done",
      45_000,
    ).then(
      () => true,
      () => false,
    );
    const frozenS = ((performance.now() - frozenAt) / 1000).toFixed(1);
    notes.push(
      finished
        ? `the second daemon finished the clip ${frozenS} s after the freeze; the first woken then`
        : `the first woken ${frozenS} s after the freeze, the second daemon still on the clip`,
    );
    const since = a.output().length;
    signalA("SIGCONT");
    frozen = false;
    await until("the clip done", async () => (await statusOf())?.status === "done", 180_000).catch(() => {});
    b.proc.signal("SIGTERM");
    await b.proc.exited(30_000);
    await until(
      "the woken daemon's try ended",
      () => {
        const out = a.output().slice(since);
        if (out.includes('"clip made"'))
          lateTry = out.includes('"listed":false') ? "listed nothing" : "listed";
        else if (out.includes("render try failed") || out.includes("render failed for good"))
          lateTry = "failed before listing";
        return lateTry !== "did not end";
      },
      120_000,
    ).catch(() => {});
    notes.push(`the woken daemon's try: ${lateTry}`);
  } catch (err) {
    notes.push(String(err));
  } finally {
    if (frozen) signalA("SIGCONT");
    if (b.proc.running) await b.proc.kill();
  }
  await load.stop();
  const c = clipId ? await clipChecks(scope, org.id, clipId) : null;
  const o = orphans(scope);
  const final = await statusOf();
  record(w, {
    scenario: "zombie host",
    recorder: r,
    recoveryMs: null,
    recoveryBound: null,
    checks: {
      files: c?.files ?? na(),
      quota: c?.quota ?? na(),
      ledger: c?.ledger ?? na(),
      tmp: na("n/a (S3)"),
      chromium: o === 0 ? { ok: true, text: "0" } : { ok: false, text: `${o} orphans` },
    },
    // Only a woken try that reached the listing shows the rule; one that failed before says nothing.
    special:
      c?.special.ok && lateTry !== "listed nothing"
        ? { ok: null, text: `${c?.special.text} (the woken try ${lateTry}: not exercised)` }
        : (c?.special ?? { ok: false, text: "no clip" }),
    notes: [...notes, `clip ${final?.status ?? "?"} after ${final?.attempts ?? "?"} tries`],
  });
}
