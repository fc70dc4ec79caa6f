/**
 * The chaos run's data checks, read from the API, the database and the store itself after a scenario:
 * no listed half-file (listed = rows = stored objects), quota bytes counted = bytes stored, the credit
 * ledger balanced with every render charged once, temporary files swept, no Chromium left by a dead daemon.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ObjectStore } from "@site/storage";
import type postgres from "postgres";
import { orphanChromium } from "./services.ts";

/** One check: passed (true), failed (false) or not applicable (null), with what was seen. */
export type Check = { ok: boolean | null; text: string };

export const na = (text = "n/a"): Check => ({ ok: null, text });

export type Scope = {
  sql: postgres.Sql;
  store: ObjectStore;
  api: string;
  key: string;
  orgId: string;
  siteId: string;
  /** Local-disk stores: the objects folder, whose `.tmp` must be swept. */
  objectsDir: string | null;
  /** Where daemons keep their Chromium profiles. */
  chromiumTmp: string[];
};

/** Keys the API lists for the site (every page). */
async function listed(s: Scope): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const res = await fetch(`${s.api}/api/v1/sites/${s.siteId}/media?limit=100${q}`, {
      headers: { authorization: `Bearer ${s.key}` },
    });
    if (res.status !== 200) throw new Error(`media list answered ${res.status}`);
    const body = (await res.json()) as { images: { url: string; size: number }[]; nextCursor: string | null };
    for (const img of body.images)
      out.set(
        img.url
          .replace(/^\/api\/media\//, "")
          .split("/")
          .map(decodeURIComponent)
          .join("/"),
        img.size,
      );
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  return out;
}

/** listed = rows = stored objects, by key and size; and quota bytes counted = bytes stored. */
export async function filesAndQuota(s: Scope): Promise<{ files: Check; quota: Check; count: number }> {
  const list = await listed(s);
  const rows = new Map<string, number>();
  for (const r of await s.sql<{ key: string; size: string }[]>`
    select key, size::text from media_files where site_id = ${s.siteId}`)
    rows.set(r.key, Number(r.size));
  const stored = new Map<string, number>();
  for await (const o of s.store.list(`site-media/${s.siteId}/`)) stored.set(o.key, o.size);
  const diff: string[] = [];
  for (const [k, size] of rows) {
    if (!list.has(k)) diff.push(`row not listed ${k}`);
    if (stored.get(k) !== size) diff.push(`row ${k} ${size} B, stored ${stored.get(k) ?? "nothing"}`);
  }
  for (const k of list.keys()) if (!rows.has(k)) diff.push(`listed without a row ${k}`);
  for (const k of stored.keys()) if (!rows.has(k)) diff.push(`stored, no row ${k}`);
  const [org] = await s.sql<{ used: string }[]>`
    select storage_used_bytes::text as used from organizations where id = ${s.orgId}`;
  const used = Number(org?.used ?? -1);
  const storedBytes = [...stored.values()].reduce((a, b) => a + b, 0);
  return {
    count: rows.size,
    files: diff.length
      ? { ok: false, text: `${diff.length} differ: ${diff.slice(0, 3).join("; ")}` }
      : { ok: true, text: `${rows.size} files` },
    quota:
      used === storedBytes
        ? { ok: true, text: `${used} B` }
        : { ok: false, text: `counted ${used} B, stored ${storedBytes} B` },
  };
}

/** The organization's credits = its ledger; every render one debit, a refund exactly when it failed. */
export async function ledger(s: Scope): Promise<Check & { pending: number }> {
  const [bal] = await s.sql<{ credits: number; sum: number }[]>`
    select o.credits, coalesce((select sum(delta)::int from credit_ledger where org_id = o.id), 0) as sum
    from organizations o where o.id = ${s.orgId}`;
  const renders = await s.sql<{ id: string; status: string; debits: number; refunds: number }[]>`
    select r.id, r.status,
      (select count(*)::int from credit_ledger l where l.subject_id = r.id and l.reason = 'screenshot_debit') as debits,
      (select count(*)::int from credit_ledger l where l.subject_id = r.id and l.reason = 'screenshot_refund') as refunds
    from screenshot_renders r where r.org_id = ${s.orgId}`;
  const bad: string[] = [];
  if (!bal || bal.credits !== bal.sum) bad.push(`credits ${bal?.credits} ≠ ledger ${bal?.sum}`);
  for (const r of renders) {
    if (r.debits !== 1) bad.push(`render ${r.id.slice(0, 8)} debited ${r.debits}×`);
    const wantRefund = r.status === "failed" ? 1 : 0;
    if (r.refunds !== wantRefund) bad.push(`render ${r.id.slice(0, 8)} ${r.status}, refunded ${r.refunds}×`);
  }
  const by = (st: string) => renders.filter((r) => r.status === st).length;
  const pending = by("pending");
  if (pending) {
    const [p] = await s.sql<{ admitted: number; tried: number }[]>`
      select count(*) filter (where dispatched_at is not null)::int as admitted,
        count(*) filter (where attempts > 0)::int as tried
      from screenshot_renders where org_id = ${s.orgId} and status = 'pending'`;
    bad.push(`${pending} still pending (${p?.admitted} admitted, ${p?.tried} tried)`);
  }
  const text = `${renders.length} renders (${by("done")} done, ${by("failed")} failed)`;
  return bad.length
    ? { ok: false, text: `${text}: ${bad.slice(0, 3).join("; ")}`, pending }
    : { ok: true, text, pending };
}

/** Temporary files of a local-disk store left in `objects/.tmp` (readiness probes aside). */
export function tempFiles(s: Scope): number {
  if (!s.objectsDir) return 0;
  const dir = join(s.objectsDir, ".tmp");
  if (!existsSync(dir)) return 0;
  return readdirSync(dir).filter((n) => !n.startsWith("probe-")).length;
}

/** Chromium processes whose daemon is dead (profile under one of the daemons' temp folders). */
export function orphans(s: Scope): number {
  return s.chromiumTmp.reduce((n, dir) => n + orphanChromium(dir), 0);
}
