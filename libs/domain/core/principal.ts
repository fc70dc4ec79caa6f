import type { RateDecision } from "./rate_limit.ts";

/** The four scopes of the specification, and `webhooks:write` (CONTRACT "Webhooks"). */
export const SCOPES = [
  "content:read",
  "content:write",
  "sites:write",
  "social:write",
  "webhooks:write",
] as const;
/** A scope an API key may carry. */
export type Scope = (typeof SCOPES)[number];

/** Who is calling: an API key of one organization, created by one user with a role there. */
export type Principal = {
  keyId: string;
  orgId: string;
  userId: string;
  /** What the key may do now: its scopes capped by its creator's current role (ROLE_SCOPES). */
  scopes: Scope[];
  role: "owner" | "admin" | "editor" | "viewer" | null;
  /** This request's count against the key's rate limit, when limits are on (never cached). */
  rate?: RateDecision;
  /** The scopes the key was created with, when the role took some away. */
  keyScopes?: Scope[];
};
