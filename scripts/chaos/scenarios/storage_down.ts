/** The S3 server SIGKILLed under imports and uploads, and restarted with its files. */
import type { World } from "../world.ts";
import { outage } from "./_outage.ts";

/** Plays "storage down" on the s3 stack, its probe a URL import. */
export function storageDown(w: World): Promise<void> {
  return outage(w, "storage down", w.s3Stack, {
    kill: () => w.s3.proc.kill(),
    back: () => w.s3.start(),
    probeKind: "import",
    mix: { read: 0.4, import: 0.3, upload: 0.25, screenshot: 0.05 },
  });
}
