/** The source of time, injected so expiries and collector stages are testable without sleeping. */
export type Clock = { now(): Date };

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that reads `at` until moved; for tests and `--now`. */
export function fixedClock(at: Date): Clock & { set(d: Date): void; advance(ms: number): void } {
  let t = at.getTime();
  return {
    now: () => new Date(t),
    set: (d: Date) => {
      t = d.getTime();
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}
