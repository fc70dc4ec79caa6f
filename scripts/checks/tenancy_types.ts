import type { Context, OwnedSite } from "@site/domain/core";
import type { listLibrary } from "@site/domain/media";
import type { getCampaign } from "@site/domain/newsletters";
import type { getLayout, listPages } from "@site/domain/sites";

/**
 * Type-level half of tenancy_test.ts (decision 1541): a bare id does not compile where a site function
 * wants an owned site, nor does a look-alike row. `tsc` checks this file (`bun x tsc --noEmit`); nothing
 * runs it. Were a signature to take a string again, its `@ts-expect-error` would be unused and the build
 * would fail.
 */
export function bareIdsDoNotCompile(
  fns: {
    listPages: typeof listPages;
    getLayout: typeof getLayout;
    listLibrary: typeof listLibrary;
    getCampaign: typeof getCampaign;
  },
  ctx: Context & Parameters<typeof listLibrary>[0],
  id: string,
  site: OwnedSite,
): void {
  // @ts-expect-error a site id is not an owned site
  void fns.listPages(ctx, id);
  // @ts-expect-error a site id is not an owned site
  void fns.getLayout(ctx, id, "member");
  // @ts-expect-error a site id is not an owned site
  void fns.listLibrary(ctx, id, {});
  // @ts-expect-error a site id is not an owned site
  void fns.getCampaign(ctx, id, "c");
  // @ts-expect-error a row with the same fields is not an owned site: only the check brands one
  void fns.listPages(ctx, { id, orgId: id });
  void fns.listPages(ctx, site);
}
