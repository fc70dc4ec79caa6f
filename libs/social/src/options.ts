import type { Clock } from "@site/config";
import type { PollOptions } from "./_graph.ts";

/** What every adapter is built with. */
export type AdapterOptions = {
  /** Dates a publication the platform does not date. */
  clock: Clock;
  /** How long to wait for platform-side processing (Graph containers, TikTok, X video). */
  poll: PollOptions;
  /** The `LinkedIn-Version` header (YYYYMM) of LinkedIn's versioned REST API. */
  linkedinVersion: string;
};
