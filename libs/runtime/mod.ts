/** Builds the shared dependencies of every app from the configuration (database, and the drivers); health probes. */

export {
  type Check,
  type CheckResult,
  checkReadiness,
  dependencyChecks,
  livenessResponse,
  type Readiness,
  readinessProbe,
  readinessResponse,
  serveHealth,
} from "./src/health.ts";
export {
  PUBLIC_BASE_RECORD,
  recordedPublicBase,
  recordPublicBase,
  sharePublicBase,
} from "./src/public_base.ts";
export { createRedisRateLimiter, openRateLimiter } from "./src/rate_limit.ts";
export { openRuntime, type Runtime } from "./src/runtime.ts";
export { processShutdown, type Shutdown } from "./src/shutdown.ts";
