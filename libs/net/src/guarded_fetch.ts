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
  | { kind: "body"; status: number; contentType: string | null; length: number | null; res: IncomingMessage };

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
        res.pause();
        resolve({
          kind: "body",
          status,
          contentType: (res.headers["content-type"] as string | undefined) ?? null,
          length: Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
          res,
        });
      },
    );
    onRequest((err) => req.destroy(err));
    req.on("error", (err) =>
      reject(err instanceof GuardedFetchError ? err : new GuardedFetchError("network", err.message)),
    );
    req.end();
  });
}

/** A guarded response whose body is still streaming (size cap and deadline enforced as it flows). */
export type GuardedStream = {
  url: string;
  status: number;
  contentType: string | null;
  /** The declared Content-Length, when the server sent one (never above maxBytes). */
  length: number | null;
  body: ReadableStream<Uint8Array>;
};

/**
 * Fetches an https URL from the public internet only: every hop's host is checked before connecting,
 * resolved once and the connection pinned to that address; redirects are re-checked and capped; the
 * body streams with the size cap applied as it flows; one deadline covers the whole fetch and body.
 */
export async function guardedFetchStream(url: string, opts: GuardedFetchOptions): Promise<GuardedStream> {
  let destroyCurrent: ((err: Error) => void) | null = null;
  let failBody: ((err: Error) => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new GuardedFetchError(
        "timeout",
        `the remote host did not answer within ${opts.timeoutMs} ms`,
      );
      destroyCurrent?.(err);
      failBody?.(err);
      reject(err);
    }, opts.timeoutMs);
  });
  deadline.catch(() => {});
  const connect = async () => {
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
      if (out.kind === "body") return { ...out, url: current };
      if (hop >= opts.maxRedirects)
        throw new GuardedFetchError("too_many_redirects", `more than ${opts.maxRedirects} redirects`);
      current = new URL(out.location, current).toString();
    }
  };
  let hop: Awaited<ReturnType<typeof connect>>;
  try {
    hop = await Promise.race([connect(), deadline]);
  } catch (err) {
    clearTimeout(timer);
    throw err;
  }
  const { res } = hop;
  let total = 0;
  let settled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const finish = (err?: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) {
            res.destroy();
            controller.error(err);
          } else controller.close();
        };
        failBody = finish;
        res.on("data", (chunk: Buffer) => {
          total += chunk.byteLength;
          if (total > opts.maxBytes || (hop.length !== null && total > hop.length)) {
            finish(new GuardedFetchError("too_large", `the file is over ${opts.maxBytes} bytes`));
            return;
          }
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) res.pause();
        });
        res.on("end", () => finish());
        res.on("error", (err) => finish(new GuardedFetchError("network", err.message)));
        res.on("close", () => {
          if (!res.complete) finish(new GuardedFetchError("network", "the connection closed early"));
        });
      },
      pull() {
        res.resume();
      },
      cancel() {
        settled = true;
        clearTimeout(timer);
        res.destroy();
      },
    },
    { highWaterMark: 8 },
  );
  return { url: hop.url, status: hop.status, contentType: hop.contentType, length: hop.length, body };
}

/** guardedFetchStream, with the whole body read into memory (at most maxBytes). */
export async function guardedFetch(url: string, opts: GuardedFetchOptions): Promise<FetchedBody> {
  const out = await guardedFetchStream(url, opts);
  const exact = out.length !== null ? new Uint8Array(out.length) : null;
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = out.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (exact) exact.set(value, total);
    else chunks.push(value);
    total += value.byteLength;
  }
  const body = exact ? exact.subarray(0, total) : new Uint8Array(Buffer.concat(chunks));
  return { url: out.url, status: out.status, contentType: out.contentType, body };
}
