import { and, eq, isNull } from "drizzle-orm";
import { apiKeys, memberships } from "@site/db";
import type { Context } from "./context.ts";
import { AppError } from "./errors.ts";
import { hashSecret } from "./secrets.ts";

/** The four scopes of the specification. */
export const SCOPES = ["content:read", "content:write", "sites:write", "social:write"] as const;
/** A scope an API key may carry. */
export type Scope = (typeof SCOPES)[number];

/** Who is calling: an API key of one organization, created by one user with a role there. */
export type Principal = {
  keyId: string;
  orgId: string;
  userId: string;
  scopes: Scope[];
  role: "owner" | "admin" | "editor" | "viewer" | null;
};

/** Resolves `Authorization: Bearer <key>` to a principal: 401 UNAUTHORIZED when missing, unknown or revoked. */
export async function authenticate(
  ctx: Context,
  authorization: string | null | undefined,
): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match)
    throw new AppError("UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <API_KEY>");
  const rows = await ctx.db
    .select({
      keyId: apiKeys.id,
      orgId: apiKeys.orgId,
      userId: apiKeys.userId,
      scopes: apiKeys.scopes,
      role: memberships.role,
    })
    .from(apiKeys)
    .leftJoin(memberships, and(eq(memberships.orgId, apiKeys.orgId), eq(memberships.userId, apiKeys.userId)))
    .where(and(eq(apiKeys.secretHash, hashSecret(match[1]!)), isNull(apiKeys.revokedAt)))
    .limit(1);
  const row = rows[0];
  if (!row) throw new AppError("UNAUTHORIZED", "invalid or revoked API key");
  return { ...row, scopes: row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)) };
}

/** 403 FORBIDDEN unless the key carries `scope`. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) {
    throw new AppError("FORBIDDEN", `this API key lacks the ${scope} scope`, { requiredScope: scope });
  }
}

/** True when the key's creator may manage sites in the organization (owner or admin). */
export function canManageSites(principal: Principal): boolean {
  return principal.role === "owner" || principal.role === "admin";
}

/** 403 FORBIDDEN unless the key's creator may manage sites in the organization. */
export function requireSiteManager(principal: Principal): void {
  if (!canManageSites(principal)) {
    throw new AppError("FORBIDDEN", "the creator of this API key may not manage sites in this organization");
  }
}
