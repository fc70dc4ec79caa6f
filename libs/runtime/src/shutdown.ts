import type { Logger } from "@site/config";

/** A process's stop on SIGINT or SIGTERM, shared by every entry point (the API, the daemon, metrics, serve_all). */
export type Shutdown = {
  /** True from the first signal on: health probes answer 503, watchers of child processes stay quiet. */
  readonly stopping: boolean;
  /**
   * From now on the first SIGINT or SIGTERM stops the process: `stop` (the app's own ordered stop), then
   * the runtime closes (database, queue), then exit 0. A second signal while stopping is ignored. Call it
   * once the app is started: before, a signal has its default action.
   */
  stopWith(stop: () => Promise<void>): void;
};

/**
 * The shutdown of a process built on `rt`, named `name` in its two log lines (`<name> stopping` with
 * the signal, `<name> stopped`). Created before the app starts when something reads `stopping` early.
 */
export function processShutdown(rt: { log: Logger; close(): Promise<void> }, name: string): Shutdown {
  let stopping = false;
  return {
    get stopping() {
      return stopping;
    },
    stopWith(stop) {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.on(signal, async () => {
          if (stopping) return;
          stopping = true;
          rt.log.info(`${name} stopping`, { signal });
          await stop();
          await rt.close();
          rt.log.info(`${name} stopped`);
          process.exit(0);
        });
      }
    },
  };
}
