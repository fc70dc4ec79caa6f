import type { Config, Logger } from "@site/config";
import {
  createBrowserPool,
  createUrlGuard,
  findBrowser,
  addressCheckFor,
  PageDeadlineError,
} from "@site/browser";
import { createCompositor } from "./compose/compositor.ts";
import { PermanentJobError } from "@site/queue";
import { filmPage } from "./film/capture.ts";
import type { RenderPipeline } from "./render_types.ts";

/** Builds the pipeline: a Chromium pool for filming and a warm compositor page. */
export async function createPipeline(opts: { config: Config; log: Logger }): Promise<RenderPipeline> {
  const { config, log } = opts;
  const executablePath = findBrowser(config.chromiumPath);
  if (!executablePath) throw new Error("no Chromium found (set CHROMIUM_PATH or install chromium)");
  const pool = createBrowserPool({
    executablePath,
    gpu: config.renderGpu,
    allowHosts: config.fetchAllowHosts,
    localNetwork: config.allowLocalNetworkForDevelopment,
    extraCaFile: config.extraCaFile,
    concurrency: config.renderConcurrency,
    log,
  });
  const compositor = await createCompositor({ executablePath, gpu: config.renderGpu, log });
  return {
    film: (s, limits) =>
      pool
        .withPage(
          (page, context) =>
            filmPage(
              page,
              context,
              s,
              createUrlGuard({ isBlocked: addressCheckFor(config), allowHosts: config.fetchAllowHosts }),
            ),
          limits,
        )
        .catch((err) => {
          if (!(err instanceof PageDeadlineError)) throw err;
          // The page's own behaviour: not a transient fault, so not retried (0471).
          throw new PermanentJobError(
            `the page did not finish loading within ${Math.round(config.renderPageDeadlineMs / 1000)} s ` +
              "(it stopped responding or loads too slowly); it was stopped and is not retried",
          );
        }),
    compose: (c, look) => compositor.compose(c, look),
    close: async () => {
      await Promise.all([pool.close(), compositor.close()]);
    },
  };
}
