import type { MediaContext } from "@site/domain/media";
import type { JobQueue } from "@site/queue";

/**
 * What creating, changing and publishing posts runs on: media (share URLs, JPEG variants) and the job
 * queue. Without a queue (a domain call, a one-off script) a post's targets are published in the call.
 */
export type PostContext = MediaContext & { queue?: JobQueue };
