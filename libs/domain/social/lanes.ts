/**
 * A lane per platform: at most `concurrency` calls in flight, and a pause every caller consults when the
 * platform answered "too many requests" with a retry-after.
 */
export class PlatformLane {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private pausedUntil = 0;
  constructor(private readonly concurrency: number) {}

  /** Pauses the lane until `ms` from now (never shortens a longer pause). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Milliseconds until the pause is over (0 when not paused). */
  remainingPauseMs(): number {
    return Math.max(0, this.pausedUntil - Date.now());
  }

  /** Waits until the pause is over. */
  async waitOutPause(): Promise<void> {
    for (let wait = this.remainingPauseMs(); wait > 0; wait = this.remainingPauseMs())
      await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /** Runs `fn` when a slot is free. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}
