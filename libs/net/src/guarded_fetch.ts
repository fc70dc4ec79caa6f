import { lookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { type RequestOptions, request } from "node:https";
import { checkFetchTarget, classifyIp, type FetchTarget, TargetError } from "./address.ts";
import {
  connectionError,
  dnsError,
  type FetchStage,
  GuardedFetchError,
  STAGE_WORDS,
} from "./fetch_errors.ts";

import { isLocalNetworkReason, LOCAL_NETWORK_HINT } from "./local_network.ts";

export { GuardedFetchError } from "./fetch_errors.ts";

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
   * ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: loopback and private addresses are allowed too, and plain
   * http to them (never to a public address). Development only; refused at boot in production.
   */
  localNetwork?: boolean;
  /**
   * Extra trusted CA certificates (PEM) for this fetch. Production leaves it unset and relies on the
   * system store plus NODE_EXTRA_CA_CERTS; in-process tests pass their self-signed CA here.
   */
  tls?: { ca?: string | string[] };
  /** Sent as the Accept header. */
  accept?: string;
  /** The request method (default GET); POST sends `body`. */
  method?: "GET" | "POST";
  /** Further request headers (a webhook's signature headers, its content type). */
  headers?: Record<string, string>;
  /** The request body (POST). */
  body?: string;
  /**
   * Answer every final status (not only 2xx) with its body, instead of failing with `http_status`: a
   * caller that records the receiver's answer (webhooks). Redirects within `maxRedirects` are followed;
   * one past it is answered as it came (its 3xx status), not thrown as `too_many_redirects`.
   */
  anyStatus?: boolean;
  /**
   * Plain http to a FETCH_ALLOW_HOSTS host (test receivers on loopback); every other target still
   * needs https.
   */
  plainHttpToExempt?: boolean;
  /** Name resolution; default the system resolver. Tests inject one (names that fail or point anywhere). */
  resolve?: Resolver;
};

/** What a guarded fetch brought back. */
export type FetchedBody = { url: string; status: number; contentType: string | null; body: Uint8Array };

/** Every address a host name resolves to (the system resolver by default; tests inject their own). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (getaddrinfo), every answer in the order it gave them. */
export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** Resolves a checked target once: every address must be public (unless exempt); the first is the one to pin. */
export async function resolvePinned(
  target: FetchTarget,
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: 4 | 6 }> {
  const plainHttpToPublic = (why: string | null) =>
    !why && target.url.protocol === "http:"
      ? new GuardedFetchError("invalid_url", "only https URLs can be fetched from public addresses")
      : null;
  if (target.literal) {
    const refused = plainHttpToPublic(classifyIp(target.literal));
    if (refused) throw refused;
    return { address: target.literal, family: target.literal.includes(":") ? 6 : 4 };
  }
  let found: { address: string; family: number }[];
  try {
    found = await resolve(target.host);
  } catch (err) {
    throw dnsError(target.host, err);
  }
  if (found.length === 0)
    throw dnsError(target.host, Object.assign(new Error("no addresses"), { code: "ENODATA" }));
  if (!target.exempt) {
    for (const a of found) {
      const why = classifyIp(a.address);
      if (why && !(target.localNetwork && isLocalNetworkReason(why)))
        throw new GuardedFetchError(
          "blocked",
          `${target.host} resolves to a non-public address: ${why}; ${LOCAL_NETWORK_HINT}`,
        );
      const refused = plainHttpToPublic(why);
      if (refused) throw refused;
    }
  }
  const first = found[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

type Hop =
  | { kind: "redirect"; location: string }
  | {
      kind: "body";
      status: number;
      contentType: string | null;
      length: number | null;
      headers: IncomingMessage["headers"];
      res: IncomingMessage;
    };

const hostPortOf = (target: FetchTarget) =>
  `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;

function fetchOnce(
  target: FetchTarget,
  pinned: { address: string; family: 4 | 6 },
  opts: GuardedFetchOptions,
  progress: { stage: FetchStage; destroy: ((err: Error) => void) | null },
  followRedirect = true,
): Promise<Hop> {
  // Plain http only ever reaches a local address (development switch; see resolvePinned).
  const send = target.url.protocol === "http:" ? httpRequest : request;
  return new Promise<Hop>((resolve, reject) => {
    progress.stage = "connecting";
    const req = send(
      {
        host: target.host,
        servername: target.literal ? undefined : target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method: opts.method ?? "GET",
        headers: {
          accept: opts.accept ?? "*/*",
          "user-agent": "site-content-api/1 (import)",
          ...opts.headers,
          ...(opts.body !== undefined ? { "content-length": String(Buffer.byteLength(opts.body)) } : {}),
        },
        ca: opts.tls?.ca,
        agent: false,
        // The connection goes to the address that was checked, never to a second DNS answer.
        lookup: ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          o?.all ? cb(null, [pinned]) : cb(null, pinned.address, pinned.family)) as RequestOptions["lookup"],
      },
      (res: IncomingMessage) => {
        progress.stage = "reading";
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location && followRedirect) {
          res.destroy();
          resolve({ kind: "redirect", location });
          return;
        }
        if ((status < 200 || status >= 300) && !opts.anyStatus) {
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
          headers: res.headers,
          res,
        });
      },
    );
    progress.destroy = (err) => req.destroy(err);
    req.on("socket", (socket) => {
      socket.once("connect", () => {
        progress.stage = "handshake";
      });
      socket.once("secureConnect", () => {
        progress.stage = "waiting";
      });
    });
    req.on("error", (err) => reject(connectionError(hostPortOf(target), target.host, err, progress.stage)));
    req.end(opts.body);
  });
}

/** A guarded response whose body is still streaming (size cap and deadline enforced as it flows). */
export type GuardedStream = {
  url: string;
  status: number;
  contentType: string | null;
  /** The declared Content-Length, when the server sent one (never above maxBytes). */
  length: number | null;
  /** The answer's headers (lower-case names), e.g. a receiver's Retry-After. */
  headers: IncomingMessage["headers"];
  body: ReadableStream<Uint8Array>;
};

/**
 * Fetches an https URL from the public internet only: every hop's host is checked before connecting,
 * resolved once and the connection pinned to that address; redirects are re-checked and capped; the
 * body streams with the size cap applied as it flows; one deadline covers the whole fetch and body.
 */
export async function guardedFetchStream(url: string, opts: GuardedFetchOptions): Promise<GuardedStream> {
  const progress: { stage: FetchStage; destroy: ((err: Error) => void) | null } = {
    stage: "resolving",
    destroy: null,
  };
  let failBody: ((err: Error) => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new GuardedFetchError(
        "timeout",
        `the remote host did not answer within ${opts.timeoutMs} ms (${STAGE_WORDS[progress.stage]})`,
      );
      progress.destroy?.(err);
      failBody?.(err);
      reject(err);
    }, opts.timeoutMs);
  });
  deadline.catch(() => {});
  const connect = async () => {
    let current = url;
    for (let hop = 0; ; hop++) {
      let target: FetchTarget;
      // The first hop's refusals are made before any connection; a redirect's come after one.
      const first = hop === 0;
      try {
        target = checkFetchTarget(current, opts.allowHosts ?? [], {
          localNetwork: opts.localNetwork,
          plainHttpToExempt: opts.plainHttpToExempt,
        });
      } catch (err) {
        if (err instanceof TargetError)
          throw new GuardedFetchError(err.kind === "blocked" ? "blocked" : "invalid_url", err.message, {
            refusedBeforeConnecting: first,
          });
        throw err;
      }
      progress.stage = "resolving";
      let pinned: { address: string; family: 4 | 6 };
      try {
        pinned = await resolvePinned(target, opts.resolve);
      } catch (err) {
        // A resolved address the guard refuses (or plain http to a public one): still no connection.
        // A name that does not resolve is a failure of the fetch, not a refusal of ours.
        if (
          first &&
          err instanceof GuardedFetchError &&
          (err.kind === "blocked" || err.kind === "invalid_url")
        )
          throw new GuardedFetchError(err.kind, err.message, { refusedBeforeConnecting: true });
        throw err;
      }
      // anyStatus: a redirect past the cap is the answer (a webhook records its 3xx), not an error.
      const follow = !opts.anyStatus || hop < opts.maxRedirects;
      const out = await fetchOnce(target, pinned, opts, progress, follow);
      if (out.kind === "body")
        return { ...out, url: current, host: target.host, hostPort: hostPortOf(target) };
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
        res.on("error", (err) => finish(connectionError(hop.hostPort, hop.host, err, "reading")));
        res.on("close", () => {
          if (!res.complete)
            finish(
              new GuardedFetchError(
                "network",
                `${hop.hostPort} closed the connection before the body was complete`,
              ),
            );
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
  return {
    url: hop.url,
    status: hop.status,
    contentType: hop.contentType,
    length: hop.length,
    headers: hop.headers,
    body,
  };
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
