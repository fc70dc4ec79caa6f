/** Redis SIGKILLed under load (it comes back empty): screenshots refunded or kept waiting, then rendered. */
import type { World } from "../world.ts";
import { outage } from "./_outage.ts";

/** Plays "redis killed" on the s3 stack, its probe a second organization's screenshots. */
export function redisKilled(w: World): Promise<void> {
  return outage(w, "redis killed", w.s3Stack, {
    kill: () => w.redis.proc.kill(),
    back: () => w.redis.start(),
    probeKind: "screenshot",
    mix: { read: 0.5, import: 0.1, upload: 0.1, screenshot: 0.3 },
  });
}
