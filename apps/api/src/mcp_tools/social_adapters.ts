import type { PlatformAdapters } from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";
import type { AppDeps } from "../deps.ts";

const adaptersOf = new WeakMap<object, PlatformAdapters>();

/** The platform adapters of the app's configuration, made once per configuration (as the routes make theirs). */
export function adapters(deps: AppDeps): PlatformAdapters {
  let a = adaptersOf.get(deps.config);
  if (!a) {
    a = createPlatformAdapters(deps);
    adaptersOf.set(deps.config, a);
  }
  return a;
}
