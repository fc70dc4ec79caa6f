import client from "prom-client";

/** Seconds buckets of one try (a fast receiver answers in ms; the deadline is WEBHOOK_TIMEOUT_MS). */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** How one try ended: `delivered` (2xx), `http_error` (another status), `timeout`, `network`, `refused` (the guard). */
export type TryOutcome = "delivered" | "http_error" | "timeout" | "network" | "refused";

/**
 * Webhook metrics of this process: the API's registry adds them (registerWebhookMetrics) and the
 * daemon's hand-rolled /metrics appends webhookMetricsText, so GET /metrics of both show the tries they
 * made. `webhook_deliveries_total{event,outcome}` and `webhook_delivery_duration_seconds{event,outcome}`.
 */
const tries = new client.Counter({
  name: "webhook_deliveries_total",
  help: "Webhook tries by event type and outcome (delivered, http_error, timeout, network, refused).",
  labelNames: ["event", "outcome"] as const,
  registers: [],
});
const latency = new client.Histogram({
  name: "webhook_delivery_duration_seconds",
  help: "Time of one webhook try, from connecting to the receiver's answer, by event type and outcome.",
  labelNames: ["event", "outcome"] as const,
  buckets: BUCKETS,
  registers: [],
});
const lag = new client.Histogram({
  name: "webhook_event_to_delivery_seconds",
  help: "Time from an event's commit to its successful delivery, by event type.",
  labelNames: ["event"] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600, 36000],
  registers: [],
});

/** Counts one try. */
export function observeTry(event: string, outcome: TryOutcome, seconds: number, sinceEventS?: number): void {
  tries.inc({ event, outcome });
  latency.observe({ event, outcome }, seconds);
  if (outcome === "delivered" && sinceEventS !== undefined) lag.observe({ event }, sinceEventS);
}

/** A registry of the webhook metrics alone, for an app whose /metrics is not prom-client's (the daemon). */
const own = new client.Registry();
for (const m of [tries, latency, lag]) own.registerMetric(m);

/** The webhook metrics of this process as Prometheus text (the daemon appends it to its own /metrics). */
export function webhookMetricsText(): Promise<string> {
  return own.metrics();
}

/** Adds the webhook metrics to an app's registry (idempotent per registry). */
export function registerWebhookMetrics(registry: client.Registry): void {
  for (const m of [tries, latency, lag])
    if (!registry.getSingleMetric((m as unknown as { name: string }).name)) registry.registerMetric(m);
}
