import {
  createApiKey,
  createMember,
  createOrganization,
  createUserSession,
  grantCredits,
  revokeApiKey,
  ROLES,
  type Role,
  setSitePublished,
  shareMedia,
  upsertTemplate,
  isUuid,
  notFound,
} from "@site/domain";
import type { Runtime } from "@site/runtime";

/** A mistake in the command line itself. */
export class UsageError extends Error {}

type Flags = Record<string, string>;
type Command = { usage: string; run(rt: Runtime, flags: Flags): Promise<unknown> };

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function int(flags: Flags, name: string): number | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be an integer`);
  return Number(v);
}

function siteId(flags: Flags): string {
  const id = need(flags, "site");
  if (!isUuid(id)) throw notFound("site");
  return id;
}

/** The operator commands of the contract. */
export const COMMANDS: Record<string, Command> = {
  "org:create": {
    usage: "--name N [--credits C] [--site-limit L] [--storage-quota-bytes B]",
    run: (rt, f) =>
      createOrganization(rt, {
        name: need(f, "name"),
        credits: int(f, "credits"),
        siteLimit: int(f, "site-limit"),
        storageQuotaBytes: int(f, "storage-quota-bytes"),
      }),
  },
  "org:credits": {
    usage: "--org ID [--add C]",
    run: (rt, f) => grantCredits(rt, need(f, "org"), int(f, "add") ?? 0),
  },
  "user:create": {
    usage: "--org ID --email E [--role owner|admin|editor|viewer]",
    run: (rt, f) => {
      const role = (f.role ?? "editor") as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
      return createMember(rt, { orgId: need(f, "org"), email: need(f, "email"), role });
    },
  },
  "key:create": {
    usage: "--org ID --user ID --scopes a,b,…",
    run: (rt, f) =>
      createApiKey(rt, {
        orgId: need(f, "org"),
        userId: need(f, "user"),
        scopes: need(f, "scopes")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      }),
  },
  "key:revoke": { usage: "--key-id ID", run: (rt, f) => revokeApiKey(rt, need(f, "key-id")) },
  "template:create": {
    usage: "--slug S --site ID [--name N] [--status approved|withdrawn]",
    run: (rt, f) => {
      const status = f.status as "approved" | "withdrawn" | undefined;
      if (status && status !== "approved" && status !== "withdrawn")
        throw new UsageError("--status must be approved or withdrawn");
      return upsertTemplate(rt, { slug: need(f, "slug"), siteId: siteId(f), name: f.name, status });
    },
  },
  "site:publish": {
    usage: "--site ID",
    run: async (rt, f) => {
      const s = await setSitePublished(rt, siteId(f), true);
      return { id: s.id, public_content_live: s.public_content_live };
    },
  },
  "site:unpublish": {
    usage: "--site ID",
    run: async (rt, f) => {
      const s = await setSitePublished(rt, siteId(f), false);
      return { id: s.id, public_content_live: s.public_content_live };
    },
  },
  "session:create": { usage: "--user ID", run: (rt, f) => createUserSession(rt, need(f, "user")) },
  "media:share": {
    usage: "--site ID --key KEY [--expires-in S]",
    run: (rt, f) =>
      shareMedia(rt, { siteId: siteId(f), key: need(f, "key"), expiresInSeconds: int(f, "expires-in") }),
  },
};
