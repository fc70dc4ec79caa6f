// The farm's load: every organization queues its screenshots, then the bench waits for them all.

import type postgres from "postgres";
import { type Child, waitFor } from "./child.ts";
import type { ApiCall } from "./processes.ts";
import type { FarmOptions, FarmOrg, Submitted } from "./types.ts";

/**
 * Every organization queues its renders, interleaved, a few requests at a time. A POST not answered
 * 202 is a failure; each POST's time is an admission latency.
 */
export async function submitRenders(
  opts: FarmOptions,
  tag: string,
  orgs: FarmOrg[],
  call: ApiCall,
  failures: string[],
): Promise<{ submitted: Submitted[]; admissionMs: number[] }> {
  const tasks: { org: number; n: number }[] = [];
  for (let n = 0; n < opts.rendersPerOrg; n++)
    for (let org = 0; org < opts.orgs; org++) tasks.push({ org, n });
  const submitted: Submitted[] = [];
  const admissionMs: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.submitConcurrency }, async () => {
      while (next < tasks.length) {
        const t = tasks[next++]!;
        const o = orgs[t.org]!;
        const url = `http://127.0.0.1:9/org${t.org}/shot${t.n}?${tag}`;
        const t0 = performance.now();
        const res = await call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, o.key, { url });
        admissionMs.push(performance.now() - t0);
        if (res.status !== 202) {
          failures.push(`a screenshot POST answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
          continue;
        }
        submitted.push({ id: ((await res.json()) as { renderId: string }).renderId, org: t.org, url });
      }
    }),
  );
  return { submitted, admissionMs };
}

/** Waits until no render is pending (a worker that exits, or the timeout, is a failure). */
export async function waitForRenders(
  opts: FarmOptions,
  watch: postgres.Sql,
  workers: Child[],
  failures: string[],
): Promise<void> {
  await waitFor("every render to end", opts.timeoutMs, async () => {
    const [{ n }] =
      (await watch`select count(*)::int as n from screenshot_renders where status = 'pending'`) as [
        { n: number },
      ];
    for (const w of workers) if (w.proc.exitCode !== null) throw new Error(`${w.name} exited:\n${w.tail()}`);
    return n === 0;
  }).catch((err) => failures.push(String(err)));
}
