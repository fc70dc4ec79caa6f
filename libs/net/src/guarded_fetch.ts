import { lookup } from "node:dns/promises";
import type { IncomingMessage } from "node:http";
import { type RequestOptions, request } from "node:https";
import { checkFetchTarget, classifyIp, type FetchTarget, TargetError } from "./address.ts";

/** Limits of one guarded fetch. */
export type GuardedFetchOptions = {
  /** Abort, keeping nothing, once the body passes this many bytes. */
  maxBytes: number;
  /** One deadline for DNS, connections, redirects and the body. */
  timeoutMs: number;
  /** Redirects followed at most; each target is re-checked. */
  maxRedirects: number;
  /** FETCH_ALLOW_HOSTS: `host:port` entries exempt from the public-address rule (tests only). */
  allowHosts?: readonly string[];
  /**
   * Extra trusted CA certificates (PEM) for this fetch. Production leaves it unset and relies on the
   * system store plus NODE_EXTRA_CA_CERTS; in-process tests pass their self-signed CA here.
   */
  tls?: { ca?: string | string[] };
  /** Sent as the Accept header. */
  accept?: string;
};

/** Why a guarded fetch failed; `kind` maps to the API's error codes. */
export class GuardedFetchError extends Error {
  readonly kind:
    | "invalid_url"
    | "blocked"
    | "too_large"
    | "timeout"
    | "too_many_redirects"
    | "http_status"
    | "network";
  constructor(kind: GuardedFetchError["kind"], message: string) {
    super(message);
    this.name = "GuardedFetchError";
    this.kind = kind;
  }
}

/** What a guarded fetch brought back. */
export type FetchedBody = { url: string; status: number; contentType: string | null; body: Uint8Array };

/** Resolves a checked target once: every address must be public (unless exempt); the first is the one to pin. */
export async function resolvePinned(target: FetchTarget): Promise<{ address: string; family: 4 | 6 }> {
  if (target.literal) return { address: target.literal, family: target.literal.includes(":") ? 6 : 4 };
  let found: { address: string; family: number }[];
  try {
    found = await lookup(target.host, { all: true, verbatim: true });
  } catch {
    throw new GuardedFetchError("network", `could not resolve ${target.host}`);
  }
  if (found.length === 0) throw new GuardedFetchError("network", `could not resolve ${target.host}`);
  if (!target.exempt) {
    for (const a of found) {
      const why = classifyIp(a.address);
      if (why)
        throw new GuardedFetchError("blocked", `${target.host} resolves to a non-public address: ${why}`);
    }
  }
  const first = found[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

type Hop =
  | { kind: "redirect"; location: string }
  | { kind: "body"; status: number; contentType: string | null; body: Uint8Array };

function fetchOnce(
  target: FetchTarget,
  pinned: { address: string; family: 4 | 6 },
  opts: GuardedFetchOptions,
  onRequest: (destroy: (err: Error) => void) => void,
): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const req = request(
      {
        host: target.host,
        servername: target.literal ? undefined : target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method: "GET",
        headers: { accept: opts.accept ?? "*/*", "user-agent": "site-content-api/1 (import)" },
        ca: opts.tls?.ca,
        agent: false,
        // The connection goes to the address that was checked, never to a second DNS answer.
        lookup: ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          o?.all ? cb(null, [pinned]) : cb(null, pinned.address, pinned.family)) as RequestOptions["lookup"],
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.destroy();
          resolve({ kind: "redirect", location });
          return;
        }
        if (status < 200 || status >= 300) {
          res.destroy();
          reject(new GuardedFetchError("http_status", `the server answered HTTP ${status}`));
          return;
        }
        const declared = Number(res.headers["content-length"] ?? Number.NaN);
        if (declared > opts.maxBytes) {
          res.destroy();
          reject(new GuardedFetchError("too_large", `the file is over ${opts.maxBytes} bytes`));
          return;
        }
        // One buffer when the length is declared; chunks otherwise.
        const exact = Number.isSafeInteger(declared) && declared >= 0 ? new Uint8Array(declared) : null;
        const chunks: Uint8Array[] = [];
        let total = 0;
        res.on("data", (chunk: Buffer) => {
          total += chunk.byteLength;
          if (total > opts.maxBytes || (exact && total > exact.byteLength)) {
            res.destroy();
            reject(new GuardedFetchError("too_large", `the file is over ${opts.maxBytes} bytes`));
            return;
          }
          if (exact) exact.set(chunk, total - chunk.byteLength);
          else chunks.push(new Uint8Array(chunk));
        });
        res.on("end", () => {
          const body = exact ? exact.subarray(0, total) : Buffer.concat(chunks);
          resolve({
            kind: "body",
            status,
            contentType: (res.headers["content-type"] as string | undefined) ?? null,
            body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
          });
        });
        res.on("error", (err) => reject(new GuardedFetchError("network", err.message)));
      },
    );
    onRequest((err) => req.destroy(err));
    req.on("error", (err) =>
      reject(err instanceof GuardedFetchError ? err : new GuardedFetchError("network", err.message)),
    );
    req.end();
  });
}

/**
 * Fetches an https URL from the public internet only: every hop's host is checked before connecting,
 * resolved once and the connection pinned to that address; redirects are re-checked and capped; the
 * body is capped while streaming; one deadline covers the whole fetch.
 */
export async function guardedFetch(url: string, opts: GuardedFetchOptions): Promise<FetchedBody> {
  let destroyCurrent: ((err: Error) => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new GuardedFetchError(
        "timeout",
        `the remote host did not answer within ${opts.timeoutMs} ms`,
      );
      destroyCurrent?.(err);
      reject(err);
    }, opts.timeoutMs);
  });
  const run = async (): Promise<FetchedBody> => {
    let current = url;
    for (let hop = 0; ; hop++) {
      let target: FetchTarget;
      try {
        target = checkFetchTarget(current, opts.allowHosts ?? []);
      } catch (err) {
        if (err instanceof TargetError)
          throw new GuardedFetchError(err.kind === "blocked" ? "blocked" : "invalid_url", err.message);
        throw err;
      }
      const pinned = await resolvePinned(target);
      const out = await fetchOnce(target, pinned, opts, (d) => {
        destroyCurrent = d;
      });
      if (out.kind === "body")
        return { url: current, status: out.status, contentType: out.contentType, body: out.body };
      if (hop >= opts.maxRedirects)
        throw new GuardedFetchError("too_many_redirects", `more than ${opts.maxRedirects} redirects`);
      current = new URL(out.location, current).toString();
    }
  };
  try {
    return await Promise.race([run(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
