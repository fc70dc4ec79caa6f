/** PostgreSQL SIGKILLed under load and restarted: keyed reads answer 503 meanwhile and recover. */
import type { World } from "../world.ts";
import { outage } from "./_outage.ts";

/** Plays "database killed" on the s3 stack. */
export function databaseKilled(w: World): Promise<void> {
  return outage(w, "database killed", w.s3Stack, {
    kill: () => w.pg.proc.kill(),
    back: () => w.pg.start(),
    probeKind: "read",
  });
}
