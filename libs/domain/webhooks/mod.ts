/** Webhooks: endpoints, events written with the change they report (the outbox), signed delivery. */
export * from "./models.ts";
export * from "./signing.ts";
export * from "./events.ts";
export * from "./endpoints.ts";
export * from "./deliveries.ts";
export * from "./deliver.ts";
export * from "./dispatcher.ts";
export * from "./metrics.ts";
export * from "./subscribed.ts";
export * from "./retention.ts";
