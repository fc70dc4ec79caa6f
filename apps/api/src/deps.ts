import type { Context } from "@site/domain";

/** Everything the API app is built from; tests build it with real dependencies. */
export type AppDeps = Context & {
  /** Called when the app is closed; closes what the builder opened. */
  onClose?: () => Promise<void>;
};
