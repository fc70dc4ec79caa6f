import { apiKeys, memberships } from "@site/db";
import { and, eq, isNull } from "drizzle-orm";
import type { Context } from "./context.ts";
import { AppError } from "./errors.ts";
import { type Principal, SCOPES, type Scope } from "./principal.ts";
import { rateLimitError } from "./rate_limit.ts";
import { hashSecret } from "./secrets.ts";

/**
 * The scopes a key may use, by its creator's current role (decision 0313): a key never does more than
 * the person who made it may. Viewers read; a key whose creator is no longer a member does nothing.
 * Managing sites also needs owner or admin (requireSiteManager).
 */
export const ROLE_SCOPES: Record<NonNullable<Principal["role"]>, readonly Scope[]> = {
  owner: SCOPES,
  admin: SCOPES,
  editor: SCOPES,
  viewer: ["content:read"],
};

/** Resolves `Authorization: Bearer <key>` to a principal: 401 UNAUTHORIZED when missing, unknown or revoked. */
export async function authenticate(
  ctx: Context,
  authorization: string | null | undefined,
): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match)
    throw new AppError("UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <API_KEY>");
  const hash = hashSecret(match[1]!);
  const cached = ctx.keys?.get(hash);
  if (cached) return limited(ctx, cached);
  const epoch = ctx.keys?.epoch ?? 0;
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
    .where(and(eq(apiKeys.secretHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  const row = rows[0];
  if (!row) throw new AppError("UNAUTHORIZED", "invalid or revoked API key");
  const keyScopes = row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  const allowed: readonly Scope[] = row.role ? ROLE_SCOPES[row.role] : [];
  const scopes = keyScopes.filter((s) => allowed.includes(s));
  const principal: Principal = { ...row, scopes, ...(scopes.length < keyScopes.length ? { keyScopes } : {}) };
  ctx.keys?.put(hash, principal, epoch);
  return limited(ctx, principal);
}

/** Counts the request against the key's limit: 429 RATE_LIMITED past it (decision 0804). */
async function limited(ctx: Context, principal: Principal): Promise<Principal> {
  if (!ctx.limiter) return principal;
  const rate = await ctx.limiter.take(principal.keyId);
  if (!rate.allowed) throw rateLimitError(rate);
  return { ...principal, rate };
}

/** 403 FORBIDDEN unless the key carries `scope`. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope) && principal.keyScopes?.includes(scope)) {
    const who = principal.role
      ? `a ${principal.role} in this organization, whose keys may use ${ROLE_SCOPES[principal.role].join(", ")}`
      : "no longer a member of this organization";
    throw new AppError("FORBIDDEN", `the creator of this API key is ${who}: ${scope} is not allowed`, {
      requiredScope: scope,
      role: principal.role,
    });
  }
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
