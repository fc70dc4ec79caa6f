import type { Config, Logger } from "@site/config";
import { findBrowser } from "@site/domain";
import { createCompositor } from "./compose/compositor.ts";
import { createUrlGuard, isBlockedAddress } from "./film/address_guard.ts";
import { createBrowserPool } from "./film/browser_pool.ts";
import { filmPage } from "./film/capture.ts";
import type { RenderPipeline } from "./pipeline.ts";

/** Builds the pipeline: a Chromium pool for filming and a warm compositor page. */
export async function createPipeline(opts: { config: Config; log: Logger }): Promise<RenderPipeline> {
  const { config, log } = opts;
  const executablePath = findBrowser(config.chromiumPath);
  if (!executablePath) throw new Error("no Chromium found (set CHROMIUM_PATH or install chromium)");
  const pool = createBrowserPool({
    executablePath,
    gpu: config.renderGpu,
    concurrency: config.renderConcurrency,
    log,
  });
  const compositor = await createCompositor({ executablePath, gpu: config.renderGpu, log });
  return {
    film: (s) =>
      pool.withPage((page, context) =>
        filmPage(
          page,
          context,
          s,
          createUrlGuard({ isBlocked: isBlockedAddress, allowHosts: config.fetchAllowHosts }),
        ),
      ),
    compose: (c, look) => compositor.compose(c, look),
    close: async () => {
      await Promise.all([pool.close(), compositor.close()]);
    },
  };
}
