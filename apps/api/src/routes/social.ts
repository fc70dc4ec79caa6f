// The platform adapters live in libs/social (docs/architecture.md#layout); the collector (apps/metrics)
// and publishing from the API use the same ones.
import { createPlatformAdapters } from "@site/social";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { socialAccountRoutes } from "./social_accounts.ts";
import { socialMediaRoutes } from "./social_media.ts";
import { socialPostRoutes } from "./social_posts.ts";

export { socialOAuthCallbackRoutes } from "./social_oauth.ts";

/**
 * Social accounts and posts (contract), the media library and the performance report (spec); scope
 * social:write. Each part is a file of its own; accounts and posts publish through the same adapters.
 */
export function socialRoutes(deps: AppDeps, auth: AuthMacros) {
  const adapters = createPlatformAdapters(deps);
  return new Elysia()
    .use(socialAccountRoutes(deps, auth, adapters))
    .use(socialPostRoutes(deps, auth, adapters))
    .use(socialMediaRoutes(deps, auth));
}
