/** The job queue (renders, clips, the metrics schedule, mail and webhook deliveries): one job catalog, BullMQ and in-process drivers behind one interface. */
export * from "./src/jobs.ts";
export * from "./src/queue.ts";
export { createMemoryQueue } from "./src/memory.ts";
export { createBullQueue, type BullQueueOptions, openQueuesForDashboard } from "./src/bullmq.ts";
export { openJobQueue } from "./src/open.ts";
