// The farm's processes: the API (and the sites it creates) and the render daemons.

import { join } from "node:path";
import { freePort } from "@site/db/testing";
import { type Child, startChild, waitFor } from "./child.ts";
import type { FarmOptions, FarmOrg } from "./types.ts";

/** An authenticated JSON call to the farm's API. */
export type ApiCall = (method: string, path: string, key: string, body?: unknown) => Promise<Response>;

/** The environment every farm process shares: the pooled database, the farm's Redis and queue prefix. */
export function farmEnv(tag: string, dir: string, pooled: string, redisUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    NODE_ENV: "test",
    DATABASE_URL: pooled,
    DATABASE_POOLER: "transaction",
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: tag,
    DATA_DIR: join(dir, "data"),
    SECRET_KEY: "farm-bench-secret-0123456789",
    LOG_LEVEL: "warn",
    FETCH_ALLOW_HOSTS: "127.0.0.1:9",
    RENDER_CONCURRENCY: "2",
    ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
  };
}

/**
 * Starts the API and waits until it listens. It listens on the direct URL (its key cache and render
 * waits: two connections); the daemons poll.
 */
export async function startApi(
  base: Record<string, string>,
  direct: string,
  children: Child[],
): Promise<{ api: Child; call: ApiCall }> {
  const port = freePort();
  const api = startChild("api", [process.execPath, "apps/api/src/main.ts"], {
    ...base,
    DATABASE_LISTEN_URL: direct,
    PORT: String(port),
    HOST: "127.0.0.1",
  });
  children.push(api);
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitFor("the API", 120_000, () => {
    if (api.proc.exitCode !== null) throw new Error(`the API exited:\n${api.tail()}`);
    return api.seen(apiUrl);
  });
  const call: ApiCall = async (method, path, key, body) =>
    fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return { api, call };
}

/** Creates each organization's site through the API and notes its id. */
export async function createSites(call: ApiCall, orgs: FarmOrg[]): Promise<void> {
  for (const [i, o] of orgs.entries()) {
    const res = await call("POST", "/api/v1/sites", o.key, { name: `Farm ${i}`, slug: `farm-${i}` });
    if (res.status !== 201) throw new Error(`site create answered ${res.status}: ${await res.text()}`);
    o.siteId = ((await res.json()) as { site: { id: string } }).site.id;
  }
}

/** Starts the workers, all at once (as an autoscaler adds hosts), and waits until every one is ready. */
export async function startWorkers(
  opts: FarmOptions,
  base: Record<string, string>,
  runsFile: string,
  children: Child[],
): Promise<{ workers: Child[]; startMs: number }> {
  const tStart = performance.now();
  const workers: Child[] = [];
  for (let i = 0; i < opts.workers; i++) {
    const w = startChild(`worker ${i + 1}`, [process.execPath, "scripts/bench/_farm_worker.ts"], {
      ...base,
      FARM_RUNS_FILE: runsFile,
      FARM_FILM_MS: String(opts.filmMs),
    });
    children.push(w);
    workers.push(w);
  }
  await waitFor("every worker ready", 300_000, () => {
    for (const w of workers)
      if (w.proc.exitCode !== null) throw new Error(`${w.name} exited at start:\n${w.tail()}`);
    return workers.every((w) => w.seen("farm worker ready"));
  });
  return { workers, startMs: Math.round(performance.now() - tStart) };
}
