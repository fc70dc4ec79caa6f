// The farm's correctness checks: every render done once, filmed once, charged once, stored once, and
// never more server connections than the pool.

import { readFileSync } from "node:fs";
import type postgres from "postgres";
import type { Child } from "./child.ts";
import {
  type ConnectionFigures,
  CREDITS_PER_SHOT,
  type FarmOptions,
  type FarmOrg,
  type RenderRow,
  type Submitted,
} from "./types.ts";

export type InvariantInput = {
  opts: FarmOptions;
  watch: postgres.Sql;
  /** The file each worker appends "<render> <url>" to when it films. */
  runsFile: string;
  orgs: FarmOrg[];
  grant: number;
  submitted: Submitted[];
  conns: ConnectionFigures;
  children: Child[];
};

/** The screenshot_renders rows, with their times in epoch milliseconds. */
export async function readRenders(watch: postgres.Sql): Promise<RenderRow[]> {
  return (await watch`
    select id, org_id, status, image_key, extract(epoch from created_at) * 1000 as created,
           extract(epoch from finished_at) * 1000 as finished
    from screenshot_renders`) as RenderRow[];
}

/** Checks the farm's invariants against `rows`; each broken one becomes a line in `failures`. */
export async function checkInvariants(
  i: InvariantInput,
  rows: RenderRow[],
  failures: string[],
): Promise<void> {
  const { opts, watch, submitted } = i;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const notDone = submitted.filter((s) => byId.get(s.id)?.status !== "done");
  if (notDone.length > 0)
    failures.push(
      `${notDone.length} renders lost or not done: ${notDone
        .slice(0, 5)
        .map((s) => `${s.id} (${byId.get(s.id)?.status ?? "missing"})`)
        .join(", ")}`,
    );
  if (rows.length !== submitted.length)
    failures.push(`${rows.length} render rows for ${submitted.length} renders queued`);
  const films = new Map<string, number>();
  for (const line of readFileSync(i.runsFile, "utf8").split("\n")) {
    const url = line.split(" ")[1];
    if (url) films.set(url, (films.get(url) ?? 0) + 1);
  }
  const twice = submitted.filter((s) => (films.get(s.url) ?? 0) > 1);
  if (twice.length > 0)
    failures.push(
      `${twice.length} renders run twice: ${twice
        .slice(0, 5)
        .map((s) => s.url)
        .join(", ")}`,
    );
  const never = submitted.filter((s) => byId.get(s.id)?.status === "done" && !films.get(s.url));
  if (never.length > 0) failures.push(`${never.length} renders done without being filmed`);
  const ledger = (await watch`
    select subject_id, reason, count(*)::int as n, sum(delta)::int as delta
    from credit_ledger where reason <> 'grant' group by subject_id, reason`) as {
    subject_id: string;
    reason: string;
    n: number;
    delta: number;
  }[];
  const debits = new Map<string, number>();
  for (const l of ledger) {
    if (l.reason === "screenshot_debit") debits.set(l.subject_id, (debits.get(l.subject_id) ?? 0) + l.delta);
    else if (l.reason === "screenshot_refund" && byId.get(l.subject_id)?.status === "done")
      failures.push(`render ${l.subject_id} is done and was refunded`);
  }
  const charged = submitted.filter((s) => debits.get(s.id) !== -CREDITS_PER_SHOT);
  if (charged.length > 0)
    failures.push(
      `${charged.length} renders not charged exactly once: ${charged
        .slice(0, 5)
        .map((s) => `${s.id} (${debits.get(s.id) ?? 0})`)
        .join(", ")}`,
    );
  const balances = (await watch`select id, credits from organizations`) as {
    id: string;
    credits: number;
  }[];
  for (const b of balances) {
    const k = i.orgs.findIndex((o) => o.id === b.id);
    const done = submitted.filter((s) => s.org === k && byId.get(s.id)?.status === "done").length;
    if (b.credits !== i.grant - CREDITS_PER_SHOT * done)
      failures.push(`organization ${k} holds ${b.credits} credits, not ${i.grant - CREDITS_PER_SHOT * done}`);
  }
  const files = (await watch`
    select key from media_files where source = 'screenshot'`) as { key: string }[];
  const keys = new Set(rows.map((r) => r.image_key));
  if (files.length !== submitted.length || files.some((f) => !keys.has(f.key)))
    failures.push(`${files.length} screenshot library files for ${submitted.length} renders`);
  if (i.conns.poolerServersMax > opts.poolSize)
    failures.push(
      `the pooler opened ${i.conns.poolerServersMax} server connections, over its pool of ${opts.poolSize}`,
    );
  for (const c of i.children)
    if (/too many connections|remaining connection slots/.test(c.tail()))
      failures.push(`${c.name} was refused a connection: ${c.tail().slice(-400)}`);
}
