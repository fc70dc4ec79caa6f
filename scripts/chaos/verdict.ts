/**
 * How the chaos run judges a scenario: its requests (no 500, answers within the bound, Retry-After on
 * every 503/507), its recovery time, and the data checks once its renders settled; one row each, and
 * the table printed at the end.
 */
import { type Check, filesAndQuota, ledger, na, orphans, type Scope, tempFiles } from "./checks.ts";
import type { Recorder } from "./load.ts";
import { type Proc, until } from "./services.ts";
import { BOUND_MS, RECOVERY_MS, RENDER_RECOVERY_MS, RPS } from "./settings.ts";

/** The run itself: its folder, what it started (stopped at the end, in reverse) and its results. */
export type Run = {
  dir: string;
  logDir: string;
  procs: Proc[];
  cleanups: (() => unknown)[];
  rows: Row[];
  /** When the run began (performance.now()), for the times it prints. */
  t0: number;
  /** Prints a line with the seconds since the run began. */
  say: (msg: string) => void;
};

/** The data checks of a row, besides the scenario's own. */
export type DataChecks = { files: Check; quota: Check; ledger: Check; tmp: Check; chromium: Check };

/** One scenario's result. */
export type Row = {
  scenario: string;
  requests: number;
  statuses: Record<string, number>;
  longestMs: number;
  recoveryMs: number | null;
  checks: DataChecks & { scenario: Check };
  problems: string[];
  pass: boolean;
  notes: string[];
  /** Every answer that was not 2xx, in short (for --json). */
  errors?: string[];
};

/** A judged set of requests. */
export type Judged = {
  statuses: Record<string, number>;
  longestMs: number;
  problems: string[];
  requests: number;
};

/** Data checks that were not made (the scenario did not play). */
export const noChecks = (): DataChecks => ({
  files: na(),
  quota: na(),
  ledger: na(),
  tmp: na(),
  chromium: na(),
});

/** Waits (bounded) until no render of the scope's organization is pending. */
export function settled(scope: Scope, ms = 90_000): Promise<unknown> {
  return until(
    "renders settled",
    async () => {
      const [r] = await scope.sql<{ n: number }[]>`
          select count(*)::int as n from screenshot_renders where org_id = ${scope.orgId} and status = 'pending'`;
      return r?.n === 0;
    },
    // Renders run 2 at a time per daemon (and per organization): a burst takes a while.
    ms,
  ).catch(() => {});
}

/** Waits for the scope's renders to settle (bounded), then runs the data checks. */
export async function dataChecks(
  scope: Scope,
  opts: { tmp?: boolean; settleMs?: number } = {},
): Promise<DataChecks> {
  await settled(scope, opts.settleMs);
  // Uploads land and orphans go within a few sweeps: poll until consistent (or the bound).
  let fq = await filesAndQuota(scope);
  const deadline = Date.now() + 15_000;
  while ((!fq.files.ok || !fq.quota.ok) && Date.now() < deadline) {
    await Bun.sleep(500);
    fq = await filesAndQuota(scope);
  }
  let tmp: Check = na(scope.objectsDir ? undefined : "n/a (S3)");
  if (opts.tmp !== false && scope.objectsDir) {
    let left = tempFiles(scope);
    // Swept once older than twice the longest transfer (UPLOAD_TRANSFER_TIMEOUT_MS 6 s on disk).
    const until2 = Date.now() + 25_000;
    while (left > 0 && Date.now() < until2) {
      await Bun.sleep(500);
      left = tempFiles(scope);
    }
    tmp = left === 0 ? { ok: true, text: "0 left" } : { ok: false, text: `${left} left` };
  }
  const o = orphans(scope);
  return {
    files: fq.files,
    quota: fq.quota,
    ledger: await ledger(scope),
    tmp,
    chromium: o === 0 ? { ok: true, text: "0" } : { ok: false, text: `${o} orphans` },
  };
}

/** Judges a scenario's requests: no 500 (or other unexpected 5xx), answers within the bound, Retry-After. */
export function judge(
  run: Run,
  r: Recorder,
  opts: { allowCut?: boolean; allowTimeout?: boolean } = {},
): Judged {
  const api = r.recs.filter((x) => x.kind !== "s3-put");
  const statuses: Record<string, number> = {};
  for (const x of api) statuses[x.outcome] = (statuses[x.outcome] ?? 0) + 1;
  const problems: string[] = [];
  const answered = api.filter((x) => /^\d+$/.test(x.outcome));
  const longestMs = Math.max(0, ...answered.map((x) => x.t1 - x.t0));
  for (const x of api) {
    const code = Number(x.outcome);
    if (code >= 500 && ![503, 504, 507].includes(code))
      problems.push(`${x.kind} ${x.outcome}: ${x.body?.slice(0, 160)}`);
    if ([503, 507].includes(code) && !x.retryAfter) problems.push(`${x.kind} ${code} without Retry-After`);
    if (!opts.allowCut && ["refused", "no answer"].includes(x.outcome))
      problems.push(`${x.kind}: ${x.outcome}`);
    if (x.outcome === "timeout" && !opts.allowTimeout) problems.push(`${x.kind}: no answer in 30 s`);
  }
  if (longestMs > BOUND_MS) {
    const slow = answered
      .filter((x) => x.t1 - x.t0 > BOUND_MS)
      .slice(0, 3)
      .map(
        (x) =>
          `${x.kind} ${x.outcome} in ${(x.t1 - x.t0).toFixed(0)} ms at +${((x.t0 - run.t0) / 1000).toFixed(1)} s`,
      );
    problems.push(`an answer took ${longestMs.toFixed(0)} ms (bound ${BOUND_MS}): ${slow.join(", ")}`);
  }
  return { statuses, longestMs, problems: [...new Set(problems)].slice(0, 6), requests: api.length };
}

/** What a scenario reports. */
export type Outcome = {
  scenario: string;
  recorder: Recorder;
  /** The first success after the dependency's return; null where the scenario has no recovery. */
  recoveryMs: number | null;
  recoveryBound: number | null;
  checks: DataChecks;
  /** The scenario's own check. */
  special: Check;
  notes: string[];
  /** The requests judged otherwise than by `judge(run, recorder)`. */
  judged?: Judged;
};

/** Turns a scenario's outcome into its row (pass only with no problem at all) and says the verdict. */
export function record(run: Run, o: Outcome): void {
  const judged = o.judged ?? judge(run, o.recorder);
  const problems = [...judged.problems];
  if (o.recoveryBound !== null && (o.recoveryMs === null || o.recoveryMs > o.recoveryBound))
    problems.push(
      `recovery ${o.recoveryMs === null ? "never" : `${o.recoveryMs.toFixed(0)} ms`} > ${o.recoveryBound} ms`,
    );
  const all = { ...o.checks, scenario: o.special };
  for (const [k, c] of Object.entries(all)) if (c.ok === false) problems.push(`${k}: ${c.text}`);
  const row: Row = {
    scenario: o.scenario,
    requests: judged.requests,
    statuses: judged.statuses,
    longestMs: judged.longestMs,
    recoveryMs: o.recoveryMs,
    checks: all,
    problems,
    pass: problems.length === 0,
    notes: o.notes,
    errors: o.recorder.recs
      .filter((x) => !/^2\d\d$/.test(x.outcome))
      .map((x) => `${x.kind} ${x.outcome} ${(x.t1 - x.t0).toFixed(0)} ms ${x.body ?? ""}`.slice(0, 240)),
  };
  run.rows.push(row);
  run.say(`${o.scenario}: ${row.pass ? "pass" : `FAIL (${problems.join(" | ")})`}`);
}

/** The row of a scenario that threw. */
export function failedRow(scenario: string, err: unknown): Row {
  return {
    scenario,
    requests: 0,
    statuses: {},
    longestMs: 0,
    recoveryMs: null,
    checks: { ...noChecks(), scenario: { ok: false, text: String(err).slice(0, 200) } },
    problems: [String(err).slice(0, 300)],
    pass: false,
    notes: [],
  };
}

/** Prints the run's table, then each row's notes and problems, then the bounds. */
export function printTable(run: Run): void {
  const mark = (c: Check) => (c.ok === null ? c.text : `${c.ok ? "pass" : "FAIL"} ${c.text}`);
  const head = [
    "scenario",
    "requests",
    "statuses seen",
    "longest ms",
    "recovery ms",
    "listed=rows=stored",
    "quota=stored",
    "ledger",
    "tmp swept",
    "chromium orphans",
    "scenario check",
    "result",
  ];
  const body = run.rows.map((r) => [
    r.scenario,
    String(r.requests),
    Object.entries(r.statuses)
      .sort()
      .map(([s, n]) => `${s}:${n}`)
      .join(" "),
    r.longestMs.toFixed(0),
    r.recoveryMs === null ? "-" : r.recoveryMs.toFixed(0),
    mark(r.checks.files),
    mark(r.checks.quota),
    mark(r.checks.ledger),
    mark(r.checks.tmp),
    mark(r.checks.chromium),
    mark(r.checks.scenario),
    r.pass ? "pass" : "FAIL",
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  console.log("");
  console.log(line(head));
  console.log(line(head.map(() => "---")));
  for (const b of body) console.log(line(b));
  console.log("");
  for (const r of run.rows) {
    for (const n of r.notes) console.log(`- ${r.scenario}: ${n}`);
    for (const p of r.problems) console.log(`- ${r.scenario}: FAIL ${p}`);
  }
  console.log(
    `bounds: answers <= ${BOUND_MS} ms, recovery <= ${RECOVERY_MS} ms (renders ${RENDER_RECOVERY_MS} ms); load ${RPS} req/s; run took ${((performance.now() - run.t0) / 1000).toFixed(0)} s`,
  );
}
