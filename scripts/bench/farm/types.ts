// The farm scale bench's options and result (scripts/bench/farm_scale.ts).

export type FarmOptions = {
  workers: number;
  orgs: number;
  rendersPerOrg: number;
  /** PgBouncer's default_pool_size: the most server connections the farm's pool may open. */
  poolSize: number;
  /** The bench role's CONNECTION LIMIT (stands for the server's max_connections). */
  connLimit: number;
  filmMs: number;
  submitConcurrency: number;
  timeoutMs: number;
  /** A superuser URL of the PostgreSQL server. */
  serverUrl: string;
  /** Progress lines (default: none). */
  say?: (line: string) => void;
};

export type FarmResult = {
  options: Omit<FarmOptions, "say" | "serverUrl">;
  renders: number;
  startMs: number;
  wallS: number;
  throughputPerS: number;
  steadyThroughputPerS: number;
  admissionMs: { p50: number; p99: number; max: number };
  queueToDoneMs: { p50: number; p99: number };
  serverConnections: ConnectionFigures;
  fairness: { jainAtHalf: number; orgMeanLatencyMinMs: number; orgMeanLatencyMaxMs: number };
  perRender: { xacts: number; queries: number; redisCalls: number; bytesStored: number };
  /** The same with the idle farm's own work over the run (its rate × the run's length) taken away. */
  perRenderNet: { xacts: number; queries: number; redisCalls: number; apiCpuMs: number; workerCpuMs: number };
  idlePerWorkerPerS: IdleRates;
  loadAvg: [number, number];
  redisTop: Record<string, number>;
  failures: string[];
};

export type ConnectionFigures = {
  roleMax: number;
  poolerServersMax: number;
  clientsWaitingMax: number;
  maxWaitS: number;
};

export type IdleRates = { xacts: number; queries: number; redisCalls: number; cpuMs: number };

export const CREDITS_PER_SHOT = 10;

/** An organization of the farm: its API key and the site its screenshots go to. */
export type FarmOrg = { id: string; key: string; siteId: string };

/** A render the API accepted: its id, the organization's index and the (unique) URL it films. */
export type Submitted = { id: string; org: number; url: string };

/** A screenshot_renders row as the bench reads it (epoch milliseconds as text). */
export type RenderRow = {
  id: string;
  org_id: string;
  status: string;
  image_key: string | null;
  created: string;
  finished: string | null;
};
