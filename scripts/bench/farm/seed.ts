// The farm's organizations: each with a member and an API key, and credits for its renders.

import { createLogger, loadConfig, systemClock } from "@site/config";
import type { connectDatabase } from "@site/db";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { CREDITS_PER_SHOT, type FarmOptions, type FarmOrg } from "./types.ts";

/**
 * Seeds `opts.orgs` organizations, each granted credits for its renders and 5 over (a double charge
 * shows in the balance as well as in the ledger). Their sites are created later, through the API.
 */
export async function seedOrganizations(
  opts: FarmOptions,
  seedDb: ReturnType<typeof connectDatabase>,
  dataDir: string,
): Promise<{ orgs: FarmOrg[]; grant: number }> {
  const grant = opts.rendersPerOrg * CREDITS_PER_SHOT + 5;
  const ctx: Context = {
    config: loadConfig({ SECRET_KEY: "farm-bench-secret-0123456789", DATA_DIR: dataDir }),
    db: seedDb.db,
    clock: systemClock,
    log: createLogger("silent" as never),
  };
  const orgs: FarmOrg[] = [];
  for (let i = 0; i < opts.orgs; i++) {
    const org = await createOrganization(ctx, { name: `Farm ${i}`, credits: grant });
    const user = await createMember(ctx, { orgId: org.id, email: `farm${i}@example.test`, role: "owner" });
    const key = await createApiKey(ctx, {
      orgId: org.id,
      userId: user.id,
      scopes: ["content:read", "content:write", "sites:write"],
    });
    orgs.push({ id: org.id, key: key.key, siteId: "" });
  }
  return { orgs, grant };
}
