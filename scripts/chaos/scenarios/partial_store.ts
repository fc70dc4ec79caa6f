/**
 * The disk stack's store filled between a clip's MP4 and its poster (issue 38, "Bytes without a row";
 * decisions 1421, 1422).
 */
import { readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApiKey, createMember } from "@site/domain/core";
import type { Check } from "../checks.ts";
import { Recorder } from "../load.ts";
import { until } from "../services.ts";
import { dataChecks, noChecks, record } from "../verdict.ts";
import { fresh, type World } from "../world.ts";

/** The clip both tries make: the same static page, look and size, so the same MP4 and poster sizes. */
const CLIP = { durationS: 2, fps: 24, width: 480, height: 600, motion: "scroll" };

/** The orphan walk's period on the chaos stacks (MEDIA_ORPHAN_SWEEP_EVERY_MS 2 s + GRACE 5 s), with slack. */
const SWEEP_PERIOD_MS = 15_000;

/**
 * Plays "partial store": a first clip learns the MP4's and the poster's sizes; the daemon then restarts
 * with its free-space floor (STORAGE_MIN_FREE_BYTES) set so that the same clip's MP4 fits and its poster
 * does not (the store "just above its floor", as the fault run found it). The clip fails with a sentence
 * and is refunded; within the orphan walk's period no object under the organization's social folder is
 * without a row, the quota counts exactly the rows, and no clip temp folder is left. Needs the tmpfs
 * (free space that only this run moves); not played without it.
 */
export async function partialStore(w: World): Promise<void> {
  const st = w.diskStack;
  if (!w.tmpfs) {
    record(w, {
      scenario: "partial store",
      recorder: new Recorder(),
      recoveryMs: null,
      recoveryBound: null,
      checks: noChecks(),
      special: { ok: null, text: "not played: no tmpfs (mount needs root); clip_storage_test.ts covers it" },
      notes: [],
    });
    return;
  }
  const { target, scope } = await fresh(w, st);
  // Clips are social:write.
  const user = await createMember(st.ctx, {
    orgId: scope.orgId,
    email: `chaos-clip-${Math.random().toString(36).slice(2)}@example.test`,
    role: "owner",
  });
  const { key } = await createApiKey(st.ctx, {
    orgId: scope.orgId,
    userId: user.id,
    scopes: ["social:write"],
  });
  const r = new Recorder();
  const clip = async (n: number) => {
    const out = await r.call("clip", `${target.api}/api/v1/social/media/clips`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${w.pageOrigin}/page?clip=1`, ...CLIP }),
    });
    if (out?.res.status !== 202) throw new Error(`clip ${n}: ${out?.res.status} ${out?.text}`);
    const clipId = out.json.clipId as string;
    return until(
      `clip ${n} settled`,
      async () => {
        const [x] = await scope.sql<{ status: string; error: string | null }[]>`
          select status, error from screenshot_renders where id = ${clipId}`;
        return x && x.status !== "pending" ? { clipId, ...x } : null;
      },
      180_000,
    );
  };
  const socialRows = () =>
    scope.sql<{ key: string; size: string; kind: string }[]>`
      select key, size::text, kind from social_media where org_id = ${scope.orgId} and status = 'ready'`;
  const socialObjects = async () => {
    const out = new Map<string, number>();
    for await (const o of st.store.list(`social-media/${scope.orgId}/`)) out.set(o.key, o.size);
    return out;
  };

  /** Starts the disk daemon with this free-space floor; resolves once it takes jobs. */
  const startDaemon = async (floorBytes: number) => {
    const before = st.daemon.proc.output().length;
    st.daemon.proc.start({ STORAGE_MIN_FREE_BYTES: String(floorBytes) });
    await until(
      "daemon taking jobs",
      () => st.daemon.proc.output().slice(before).includes("render daemon taking jobs"),
      90_000,
    );
  };
  const stopDaemon = async () => {
    st.daemon.proc.signal("SIGTERM");
    await st.daemon.proc.exited(40_000);
    await st.daemon.proc.kill();
  };
  const free = () => {
    const fs = statfsSync(w.diskDir);
    return fs.bavail * fs.bsize;
  };
  const filler = join(w.diskDir, "partial-store-filler");
  let first: Awaited<ReturnType<typeof clip>>;
  let second: Awaited<ReturnType<typeof clip>> | null = null;
  let floor = 0;
  let sizes = { video: 0, poster: 0 };
  let restartedAt = 0;
  try {
    await startDaemon(0);
    first = await clip(1);
    const rows = await socialRows();
    sizes = {
      video: Number(rows.find((x) => x.kind === "video")?.size ?? 0),
      poster: Number(rows.find((x) => x.kind === "image")?.size ?? 0),
    };
    await stopDaemon();
    // A floor 4 MiB below "the MP4 fits with half a poster to spare" (the restart may write a little),
    // then a filler file takes the free space down to exactly that: the MP4 fits, the poster does not.
    floor = free() - sizes.video - Math.floor(sizes.poster / 2) - 4 * 1024 * 1024;
    restartedAt = st.daemon.proc.output().length;
    await startDaemon(floor);
    await Bun.sleep(5000); // its warm-up (plates) writes, if any, before the free space is set
    const excess = free() - (floor + sizes.video + Math.floor(sizes.poster / 2));
    writeFileSync(filler, new Uint8Array(Math.max(0, excess - (excess % 4096))));
    second = await clip(2);
  } finally {
    await stopDaemon();
    rmSync(filler, { force: true });
  }

  // Within the orphan walk's period: every object under the organization's social folder has its row.
  const settledAt = performance.now();
  let strays: string[] = [];
  await until(
    "no object without a row",
    async () => {
      const keys = new Set((await socialRows()).map((x) => x.key));
      strays = [...(await socialObjects()).keys()].filter((k) => !keys.has(k));
      return strays.length === 0;
    },
    SWEEP_PERIOD_MS,
  ).catch(() => {});
  const strayMs = performance.now() - settledAt;
  const checks = await dataChecks(scope);
  // The clip's own ledger (clip_debit / clip_refund) and the social library's quota.
  const [led] = await scope.sql<{ credits: number; sum: number; debits: number; refunds: number }[]>`
    select o.credits,
      coalesce((select sum(delta)::int from credit_ledger where org_id = o.id), 0) as sum,
      (select count(*)::int from credit_ledger where org_id = o.id and reason = 'clip_debit') as debits,
      (select count(*)::int from credit_ledger where org_id = o.id and reason = 'clip_refund') as refunds
    from organizations o where o.id = ${scope.orgId}`;
  const ledger: Check =
    led &&
    led.credits === led.sum &&
    led.debits === 2 &&
    led.refunds === (second?.status === "failed" ? 1 : 0)
      ? { ok: true, text: `2 clips debited, ${led.refunds} refunded` }
      : {
          ok: false,
          text: `credits ${led?.credits} ledger ${led?.sum}, ${led?.debits} debits, ${led?.refunds} refunds`,
        };
  const [q] = await scope.sql<{ used: string }[]>`
    select storage_used_bytes::text as used from organizations where id = ${scope.orgId}`;
  const stored = [...(await socialObjects()).values()].reduce((a, b) => a + b, 0);
  let siteBytes = 0;
  for await (const o of st.store.list(`site-media/${scope.siteId}/`)) siteBytes += o.size;
  const quota: Check =
    Number(q?.used) === stored + siteBytes
      ? { ok: true, text: `${q?.used} B` }
      : { ok: false, text: `counted ${q?.used} B, stored ${stored + siteBytes} B` };
  const tempLeft = readdirSync(st.chromiumTmp).filter((n) => n.startsWith("site-clip-")).length;
  // Which writes the store refused (the daemon logs each failed try with the store's sentence): the
  // poster's, never the MP4's, or the scenario did not play what it says.
  const refused = [
    ...st.daemon.proc
      .output()
      .slice(restartedAt)
      .matchAll(/a write of (\d+) bytes is refused/g),
  ].map((m) => Number(m[1]));
  const near = (a: number, b: number) => Math.abs(a - b) <= b * 0.1;
  const problems: string[] = [];
  if (!refused.some((n) => near(n, sizes.poster)) || refused.some((n) => near(n, sizes.video)))
    problems.push(`refused writes ${refused.join(", ") || "none"}: not the poster's alone`);
  if (first.status !== "done") problems.push(`first clip ${first.status}: ${first.error}`);
  if (second?.status !== "failed") problems.push(`second clip ${second?.status ?? "never made"}`);
  if (!second?.error || /ffmpeg|E[A-Z]{3,}|errno|\/[a-z]/i.test(second.error))
    problems.push(`error not a sentence: ${second?.error ?? "-"}`);
  if (strays.length) problems.push(`${strays.length} object(s) without a row after ${strayMs.toFixed(0)} ms`);
  if (tempLeft) problems.push(`${tempLeft} clip temp folder(s) left`);
  record(w, {
    scenario: "partial store",
    recorder: r,
    recoveryMs: null,
    recoveryBound: null,
    checks: { ...checks, ledger, quota },
    special: problems.length
      ? { ok: false, text: problems.join("; ") }
      : {
          ok: true,
          text: "MP4 landed, poster refused: clip failed with a sentence, refunded; 0 objects without a row",
        },
    notes: [
      `MP4 ${sizes.video} B, poster ${sizes.poster} B, floor ${floor} B; writes refused: ${refused.join(", ") || "none"} B; second clip error: "${second?.error ?? "-"}"`,
    ],
  });
}
