import { socialAccounts } from "@site/db";
import { sql } from "drizzle-orm";
import type { SocialPlatform } from "./platform.ts";

/** The columns of an account as the API answers it (SocialAccountView): the listing's and the events' select. */
export const accountView = {
  id: socialAccounts.id,
  platform: sql<SocialPlatform>`${socialAccounts.platform}`,
  accountId: socialAccounts.accountId,
  displayName: socialAccounts.displayName,
  permissions: socialAccounts.permissions,
  tier: socialAccounts.tier,
  connectedAt: sql<string>`to_char(${socialAccounts.connectedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  status: sql<"connected" | "reconnect_required">`${socialAccounts.status}`,
  expiresAt: sql<
    string | null
  >`to_char(${socialAccounts.tokenExpiresAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};
