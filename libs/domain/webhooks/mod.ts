/** Webhooks: endpoints, events written with the change they report (the outbox), signed delivery. */

export * from "./deliver.ts";
export * from "./deliveries.ts";
export * from "./dispatcher.ts";
export * from "./endpoints.ts";
export * from "./events.ts";
export * from "./metrics.ts";
export * from "./models.ts";
export * from "./retention.ts";
export * from "./retry_after.ts";
export * from "./settle.ts";
export * from "./signing.ts";
export * from "./subscribed.ts";
