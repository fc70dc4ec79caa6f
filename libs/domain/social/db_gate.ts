import type { Database } from "@site/db";

/** Connections of the pool that the publisher leaves to requests (decision 1496). */
const LEFT_TO_REQUESTS = 4;

type Gate = { free: number; waiting: (() => void)[] };
const gates = new WeakMap<Database, Gate>();

/**
 * Runs the publisher's database work (a claim, the checks before a try, an outcome's commit) with at
 * most `pool − 4` such works at once per pool (at least 1), so that a process publishing at full speed
 * always leaves connections to the API's requests: the tries themselves (waiting on a platform) hold
 * no connection and are not counted (decision 1496).
 */
export async function withPublisherDb<T>(db: Database, poolMax: number, work: () => Promise<T>): Promise<T> {
  let g = gates.get(db);
  if (!g) {
    g = { free: Math.max(1, poolMax - LEFT_TO_REQUESTS), waiting: [] };
    gates.set(db, g);
  }
  const gate = g;
  if (gate.free > 0) gate.free--;
  else await new Promise<void>((go) => gate.waiting.push(go));
  try {
    return await work();
  } finally {
    const next = gate.waiting.shift();
    if (next) next();
    else gate.free++;
  }
}
