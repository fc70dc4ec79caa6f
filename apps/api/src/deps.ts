import type { Context } from "@site/domain/core";
import type { Mailer, SubscribeLimits } from "@site/domain/newsletters";
import type { RenderWaits } from "@site/domain/screenshots";
import type { JobQueue } from "@site/queue";
import type { ObjectStore } from "@site/storage";
import type { ApiMetrics } from "./api_metrics.ts";

/** Everything the API app is built from; tests build it with real dependencies. */
export type AppDeps = Context & {
  /** The render queue screenshot requests are queued on. */
  queue: JobQueue;
  /** Where media bytes live; routes never know which driver. */
  store: ObjectStore;
  /**
   * Extra CA certificates URL import trusts: the in-process form of NODE_EXTRA_CA_CERTS (which Bun reads
   * only at start), for HTTPS fixtures inside a test process. Production never sets it (decision 1551).
   */
  fetchTls?: { ca?: string | string[] };
  /**
   * Lifts the server's idle timeout for one request (a long template clone). Set by `startApi`; Elysia's
   * own `server` is never handed the listener, since it would swap the server's fetch for its own.
   */
  liftTimeout?: (request: Request) => void;
  /** Where newsletter mail (confirmations, tests) goes; default: opened from the configuration. */
  mailer?: Mailer;
  /** The public subscribe form's limits; default: fresh in-process limits per app. */
  subscribeLimits?: SubscribeLimits;
  /** Where the app counts its answers (GET /metrics on API_METRICS_PORT); none: not counted. */
  metrics?: ApiMetrics;
  /**
   * The process's one LISTEN for renders and clips that end (waitSeconds over REST and MCP); none:
   * waiters read once a second.
   */
  renderWaits?: RenderWaits;
  /** Called when the app is closed; closes what the builder opened. */
  onClose?: () => Promise<void>;
};
