import { sites, type Tx } from "@site/db";
import type { Context } from "@site/domain/core";
import { recordEvent } from "@site/domain/webhooks";
import { eq } from "drizzle-orm";
import { grantMemberUrl, mediaPath } from "./grants.ts";

/**
 * Records `media.created` for a file just added to a site's library, in the caller's transaction (the
 * webhook outbox, decision 0840). `data` is the entry as the library listing answers it
 * (`GET /api/v1/sites/<id>/media`), with the site's id beside it (decision 0844).
 */
export async function recordMediaCreated(
  ctx: Context,
  tx: Tx,
  file: { id: string; siteId: string; key: string; name: string; size: number; createdAt: Date },
): Promise<void> {
  const [site] = await tx.select({ orgId: sites.orgId }).from(sites).where(eq(sites.id, file.siteId));
  if (!site) return;
  await recordEvent(tx, {
    orgId: site.orgId,
    type: "media.created",
    data: () => ({
      siteId: file.siteId,
      id: file.id,
      name: file.name,
      url: mediaPath(file.key),
      displayUrl: grantMemberUrl(ctx, file.siteId, file.key),
      createdAt: file.createdAt.toISOString(),
      size: file.size,
    }),
  });
}
