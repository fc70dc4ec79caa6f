import { readServerRecord } from "@site/config";
import {
  createApiKey,
  createMember,
  createOrganization,
  createUserSession,
  grantCredits,
  isUuid,
  listAllTemplates,
  listApiKeys,
  listMembers,
  listOrganizations,
  notFound,
  ROLES,
  type Role,
  revokeApiKey,
} from "@site/domain/core";
import { shareMedia } from "@site/domain/media";
import { countRenders } from "@site/domain/screenshots";
import { setSitePublished, siteById, upsertTemplate } from "@site/domain/sites";
import type { Runtime } from "@site/runtime";
import { UsageError } from "./args.ts";

export { UsageError };

/**
 * The render queue as an operator sees it. On BullMQ: the queue's own counts and the daemons whose worker
 * connections Redis sees (host:pid). In process: the queue lives in the server's memory, so the counts
 * come from the database and the daemon is the server this DATA_DIR recorded.
 */
async function queueStatus(rt: Runtime) {
  if (rt.queue.driver === "bullmq") {
    const s = await rt.queue.stats("render-screenshot");
    return {
      driver: "bullmq",
      depth: s.waiting + s.delayed,
      waiting: s.waiting,
      delayed: s.delayed,
      active: s.active,
      failed: s.failed,
      completed: s.completed,
      daemons: s.consumers,
    };
  }
  const c = await countRenders(rt);
  const server = readServerRecord(rt.config.dataDir);
  return {
    driver: "memory",
    depth: c.waiting,
    waiting: c.waiting,
    delayed: 0,
    active: c.active,
    failed: c.failed,
    failedWithinDays: c.days,
    daemons: server?.running ? [{ name: `${server.url} (in process, pid ${server.pid})` }] : [],
    source: "database (the in-process queue lives in the server's memory)",
  };
}

type Flags = Record<string, string>;
/** One operator command: its flags (read from `usage`, which `--help` prints) and what it does. */
export type Command = { usage: string; run(rt: Runtime, flags: Flags): Promise<unknown> };

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
  "org:list": {
    usage: "(prints [{id, name, credits, siteLimit, storageQuotaBytes, storageUsedBytes, createdAt}])",
    run: (rt) => listOrganizations(rt),
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
  "user:list": {
    usage: "--org ID (prints [{id, email, role}])",
    run: (rt, f) => listMembers(rt, need(f, "org")),
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
  "key:list": {
    usage: "--org ID (prints [{id, userId, email, scopes, createdAt, revoked, revokedAt}]; never the secret)",
    run: (rt, f) => listApiKeys(rt, need(f, "org")),
  },
  "key:revoke": { usage: "--key-id ID", run: (rt, f) => revokeApiKey(rt, need(f, "key-id")) },
  "template:create": {
    usage: "--slug S --site ID [--name N] [--description D] [--status approved|withdrawn]",
    run: (rt, f) => {
      const status = f.status as "approved" | "withdrawn" | undefined;
      if (status && status !== "approved" && status !== "withdrawn")
        throw new UsageError("--status must be approved or withdrawn");
      return upsertTemplate(rt, {
        slug: need(f, "slug"),
        siteId: siteId(f),
        name: f.name,
        description: f.description,
        status,
      });
    },
  },
  "template:list": {
    usage: "(prints [{slug, name, description, siteId, status}], withdrawn ones included)",
    run: (rt) => listAllTemplates(rt),
  },
  "site:publish": {
    usage: "--site ID",
    run: async (rt, f) => {
      const s = await setSitePublished(rt, await siteById(rt, siteId(f)), true);
      return { id: s.id, public_content_live: s.public_content_live };
    },
  },
  "site:unpublish": {
    usage: "--site ID",
    run: async (rt, f) => {
      const s = await setSitePublished(rt, await siteById(rt, siteId(f)), false);
      return { id: s.id, public_content_live: s.public_content_live };
    },
  },
  "server:info": {
    // Answered by admin.ts without opening the database.
    usage: "(prints {publicBaseUrl, url, running, dataDir}: the base the server on this machine recorded)",
    run: async () => ({}),
  },
  "queue:status": {
    usage: "(prints {driver, depth, waiting, delayed, active, failed, completed, daemons})",
    run: (rt) => queueStatus(rt),
  },
  "session:create": { usage: "--user ID", run: (rt, f) => createUserSession(rt, need(f, "user")) },
  "media:share": {
    usage: "--site ID --key KEY [--expires-in S]",
    run: (rt, f) =>
      shareMedia(rt, { siteId: siteId(f), key: need(f, "key"), expiresInSeconds: int(f, "expires-in") }),
  },
};
