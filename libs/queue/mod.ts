/** The job queue (renders, clips, the metrics schedule, mail and webhook deliveries): one job catalog, BullMQ and in-process drivers behind one interface. */

export { type BullQueueOptions, createBullQueue, openQueuesForDashboard } from "./src/bullmq.ts";
export * from "./src/jobs.ts";
export { createMemoryQueue } from "./src/memory.ts";
export { openJobQueue } from "./src/open.ts";
export * from "./src/queue.ts";
