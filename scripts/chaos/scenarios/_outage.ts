/** The shape of the outage scenarios: a dependency killed under load and brought back. */
import { ledger, na } from "../checks.ts";
import { DEFAULT_MIX, firstSuccess, type Mix, play, Recorder, startLoad } from "../load.ts";
import { RECOVERY_MS, RPS } from "../settings.ts";
import { dataChecks, record, settled } from "../verdict.ts";
import { fresh, type Stack, type World } from "../world.ts";

/** How to take the dependency away and bring it back, and which request proves it is back. */
export type OutageOptions = {
  kill: () => Promise<void>;
  back: () => Promise<void>;
  probeKind: "read" | "import" | "screenshot";
  downMs?: number;
  mix?: Mix;
  notes?: (r: Recorder) => string[];
};

/**
 * A dependency killed under load and brought back: baseline 3 s, down `downMs`, back, then the first
 * success of `probeKind` after its return, 3 s more, and the checks.
 */
export async function outage(w: World, scenario: string, st: Stack, opts: OutageOptions): Promise<void> {
  const { target, scope } = await fresh(w, st);
  const r = new Recorder();
  const load = startLoad(r, target, RPS, opts.mix ?? DEFAULT_MIX);
  // Screenshots beyond an organization's admitted renders wait in the database (202) and touch no
  // queue: the queue's probe is a second organization with nothing in progress, whose render is
  // admitted and enqueued at once (a screenshot every second while the queue is away).
  const probe = opts.probeKind === "screenshot" ? await fresh(w, st) : null;
  const probeKind = probe ? "enqueue" : opts.probeKind;
  const probeOnce = () =>
    probe ? play(r, probe.target, "screenshot", "enqueue") : play(r, target, opts.probeKind);
  await Bun.sleep(3000);
  await opts.kill();
  w.say(`${scenario}: killed`);
  const downUntil = performance.now() + (opts.downMs ?? 6000);
  let burst = !!probe;
  for (let left = downUntil - performance.now(); left > 0; left = downUntil - performance.now()) {
    if (probe) void probeOnce();
    if (burst && left < 1500) {
      // Just before the queue returns, a burst of 8 screenshots of the probe's organization at once:
      // two are admitted (their enqueue fails: refunded, 503), the rest wait their turn (202) and must
      // all be rendered once it is back.
      burst = false;
      for (let i = 0; i < 8; i++) void play(r, probe!.target, "screenshot", "burst");
    }
    await Bun.sleep(Math.min(1000, left));
  }
  await opts.back();
  const since = performance.now();
  w.say(`${scenario}: back`);
  const recovery = await firstSuccess(r, since, probeKind, probeOnce);
  await Bun.sleep(3000);
  await load.stop();
  const checks = await dataChecks(scope);
  if (probe) {
    await settled(probe.scope);
    const more = await ledger(probe.scope);
    checks.ledger = {
      ok: checks.ledger.ok !== false && more.ok !== false,
      text: `${checks.ledger.text}; queue probe: ${more.text}`,
    };
  }
  record(w, {
    scenario,
    recorder: r,
    recoveryMs: recovery,
    recoveryBound: RECOVERY_MS,
    checks,
    special: na(),
    notes: opts.notes?.(r) ?? [],
  });
}
