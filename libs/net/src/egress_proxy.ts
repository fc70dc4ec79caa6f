import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { checkFetchTarget, type FetchTarget, TargetError } from "./address.ts";
import { GuardedFetchError, type Resolver, resolvePinned, systemResolver } from "./guarded_fetch.ts";

/** A connection the proxy refused: the target, and why (the import guard's words). */
export type EgressRefusal = { host: string; port: number; reason: string; url?: string };

/** Opens the upstream TCP connection to an address that passed the guard (tests redirect it). */
export type Dialer = (address: string, port: number, family: 4 | 6) => Socket;

/** How the egress proxy decides and how long it waits. */
export type EgressProxyOptions = {
  /** FETCH_ALLOW_HOSTS: `host:port` entries exempt from the public-address rule, as for imports. */
  allowHosts?: readonly string[];
  /** ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: this machine and its private network are reachable too. */
  localNetwork?: boolean;
  /** Called for every refused target (403), so a render's warnings can name it. */
  onRefused?: (refusal: EgressRefusal) => void;
  /** Name resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
  /** Upstream connection; a plain TCP connect to the checked address unless a test injects one. */
  dial?: Dialer;
  /** The largest request head accepted (request line and headers); 431 beyond it. Default 32 KiB. */
  maxHeaderBytes?: number;
  /** Time for a client to send its request head. Default 10 s. */
  headTimeoutMs?: number;
  /** Time for DNS and the upstream TCP connection together. Default 10 s. */
  connectTimeoutMs?: number;
  /** A tunnel or forwarded request with no bytes either way for this long is closed. Default 120 s. */
  idleTimeoutMs?: number;
  /** Client connections open at once; more are answered 503. Default 512. */
  maxConnections?: number;
};

/** A running egress proxy on 127.0.0.1. */
export type EgressProxy = {
  port: number;
  /** `http://127.0.0.1:<port>`, for Chromium's --proxy-server. */
  url: string;
  /** Client connections open now. */
  connections(): number;
  /** Stops listening and destroys every socket it holds. */
  close(): Promise<void>;
};

type Head = { method: string; target: string; version: string; headers: [string, string][] };

const HOP_BY_HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
  "host",
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses a request head (without its final CRLF CRLF); null when it is not well-formed HTTP/1.x. */
function parseHead(text: string): Head | null {
  const lines = text.split("\r\n");
  const m = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(lines[0] ?? "");
  if (!m) return null;
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) return null;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) return null;
    headers.push([name, value]);
  }
  return { method: m[1]!, target: m[2]!, version: m[3]!, headers };
}

/** Splits a CONNECT authority (`host:port`, `[v6]:port`); null without a valid port. */
function splitAuthority(authority: string): { host: string; port: number } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/@]+):(\d{1,5})$/.exec(authority);
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1]!, port } : null;
}

function answer(socket: Socket, status: string, kind: string, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Egress-Proxy: ${kind}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 2_000).unref();
}

/** True once a client socket was answered or dropped: nothing more may be written to it. */
const gone = (s: Socket) => s.destroyed || s.writableEnded;

/** Joins two sockets both ways; an error on either destroys both, a close ends the other gracefully. */
function splice(a: Socket, b: Socket, idleMs: number): void {
  a.pipe(b);
  b.pipe(a);
  const kill = () => {
    a.destroy();
    b.destroy();
  };
  for (const [one, other] of [
    [a, b],
    [b, a],
  ] as const) {
    one.on("error", kill);
    one.removeAllListeners("timeout");
    one.setTimeout(idleMs, kill);
    one.once("close", () => {
      other.end();
      setTimeout(() => other.destroy(), 5_000).unref();
    });
  }
}

/** The request head sent upstream: origin-form, Host from the URL, hop-by-hop headers replaced. */
function upstreamHead(head: Head, url: URL, upgrade: string | null): string {
  const connectionTokens = head.headers
    .filter(([n]) => n.toLowerCase() === "connection")
    .flatMap(([, v]) => v.split(",").map((t) => t.trim().toLowerCase()));
  const kept = head.headers.filter(([n]) => {
    const lower = n.toLowerCase();
    return !HOP_BY_HOP.has(lower) && !connectionTokens.includes(lower);
  });
  const lines = [`${head.method} ${url.pathname}${url.search} ${head.version}`, `Host: ${url.host}`];
  for (const [n, v] of kept) lines.push(`${n}: ${v}`);
  // One request per client connection: a keep-alive connection can never carry a second, unchecked host.
  if (upgrade) lines.push("Connection: Upgrade", `Upgrade: ${upgrade}`);
  else lines.push("Connection: close");
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * Starts the filtering forward proxy every Chromium of ours runs behind: CONNECT tunnels (https, wss,
 * and ws through Chromium) and absolute-form plain HTTP requests (WebSocket upgrades included) reach a
 * target only when the URL import guard would fetch it — the same checks (checkFetchTarget), the same
 * resolver and classification (resolvePinned: every answer public, the first one pinned) and the same
 * FETCH_ALLOW_HOSTS exemptions. Anything else gets a 403 and is reported through `onRefused`.
 */
export function startEgressProxy(opts: EgressProxyOptions = {}): Promise<EgressProxy> {
  const allowHosts = opts.allowHosts ?? [];
  const resolve = opts.resolve ?? systemResolver;
  const dial: Dialer = opts.dial ?? ((address, port, family) => connect({ host: address, port, family }));
  const maxHeader = opts.maxHeaderBytes ?? 32 * 1024;
  const headMs = opts.headTimeoutMs ?? 10_000;
  const connectMs = opts.connectTimeoutMs ?? 10_000;
  const idleMs = opts.idleTimeoutMs ?? 120_000;
  const maxConnections = opts.maxConnections ?? 512;
  const sockets = new Set<Socket>();
  let clients = 0;
  let closed = false;

  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };

  const refuse = (client: Socket, refusal: EgressRefusal) => {
    try {
      opts.onRefused?.(refusal);
    } catch {}
    answer(client, "403 Forbidden", "refused", `refused: ${refusal.host}:${refusal.port}: ${refusal.reason}`);
  };

  /** Checks and resolves a target; null when refused or unreachable (the client has been answered). */
  const admit = async (
    client: Socket,
    host: string,
    port: number,
    url: string | undefined,
  ): Promise<{ target: FetchTarget; pinned: { address: string; family: 4 | 6 } } | null> => {
    let target: FetchTarget;
    try {
      // An IPv6 host is bracketed already: splitAuthority keeps the brackets, and so does URL.hostname.
      target = checkFetchTarget(`https://${host}:${port}/`, allowHosts, { localNetwork: opts.localNetwork });
    } catch (err) {
      if (err instanceof TargetError && err.kind === "blocked")
        refuse(client, { host, port, reason: err.message, ...(url ? { url } : {}) });
      else answer(client, "400 Bad Request", "invalid", "not a valid target");
      return null;
    }
    try {
      return { target, pinned: await resolvePinned(target, resolve) };
    } catch (err) {
      if (err instanceof GuardedFetchError && err.kind === "blocked")
        refuse(client, { host: target.host, port, reason: err.message, ...(url ? { url } : {}) });
      else answer(client, "502 Bad Gateway", "unreachable", `could not resolve ${target.host}`);
      return null;
    }
  };

  const open = (client: Socket, pinned: { address: string; family: 4 | 6 }, port: number) =>
    new Promise<Socket | null>((done) => {
      const upstream = dial(pinned.address, port, pinned.family);
      track(upstream);
      const failed = () => {
        upstream.destroy();
        answer(client, "502 Bad Gateway", "unreachable", "the upstream host refused the connection");
        done(null);
      };
      upstream.once("error", failed);
      upstream.once("connect", () => {
        upstream.off("error", failed);
        done(upstream);
      });
    });

  const serve = async (client: Socket, head: Head, rest: Buffer) => {
    if (head.method === "CONNECT") {
      const at = splitAuthority(head.target);
      if (!at) return answer(client, "400 Bad Request", "invalid", "CONNECT needs host:port");
      const ok = await admit(client, at.host, at.port, undefined);
      if (!ok || gone(client)) return;
      const upstream = await open(client, ok.pinned, at.port);
      if (!upstream) return;
      if (gone(client)) return void upstream.destroy();
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (rest.length) upstream.write(rest);
      splice(client, upstream, idleMs);
      client.resume();
      return;
    }
    let url: URL;
    try {
      url = new URL(head.target);
    } catch {
      return answer(client, "400 Bad Request", "invalid", "only absolute-form requests are proxied");
    }
    if (url.protocol !== "http:" && url.protocol !== "ws:")
      return answer(client, "400 Bad Request", "invalid", "only http:// requests and CONNECT are proxied");
    if (url.username || url.password)
      return answer(client, "400 Bad Request", "invalid", "URLs with credentials are refused");
    // Reported as asked (a refused ws:// stays ws:// in the render's warnings), sent upstream as http.
    const shown = `${url.origin}${url.pathname}`;
    if (url.protocol === "ws:") url.protocol = "http:";
    const port = url.port ? Number(url.port) : 80;
    const ok = await admit(client, url.hostname, port, shown);
    if (!ok || gone(client)) return;
    const connection = head.headers.find(([n]) => n.toLowerCase() === "connection")?.[1] ?? "";
    const upgradeValue = head.headers.find(([n]) => n.toLowerCase() === "upgrade")?.[1] ?? null;
    const upgrade = /(^|,)\s*upgrade\s*(,|$)/i.test(connection) ? upgradeValue : null;
    const upstream = await open(client, ok.pinned, port);
    if (!upstream) return;
    if (gone(client)) return void upstream.destroy();
    upstream.write(upstreamHead(head, url, upgrade));
    if (rest.length) upstream.write(rest);
    splice(client, upstream, idleMs);
    client.resume();
  };

  const onClient = (client: Socket) => {
    track(client);
    clients++;
    client.once("close", () => clients--);
    client.on("error", () => client.destroy());
    if (closed || clients > maxConnections) {
      answer(client, "503 Service Unavailable", "busy", "too many connections");
      return;
    }
    client.setTimeout(headMs, () => client.destroy());
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buffered.length > maxHeader) {
          client.off("data", onData);
          answer(client, "431 Request Header Fields Too Large", "invalid", "request head too large");
        }
        return;
      }
      client.off("data", onData);
      client.pause();
      // DNS and the upstream connection share one deadline; the tunnel then has its idle timeout.
      client.removeAllListeners("timeout");
      client.setTimeout(connectMs, () =>
        answer(client, "504 Gateway Timeout", "unreachable", "the upstream host did not answer in time"),
      );
      if (end > maxHeader)
        return answer(client, "431 Request Header Fields Too Large", "invalid", "request head too large");
      const head = parseHead(buffered.subarray(0, end).toString("latin1"));
      if (!head) return answer(client, "400 Bad Request", "invalid", "malformed request head");
      serve(client, head, buffered.subarray(end + 4)).catch(() => client.destroy());
    };
    client.on("data", onData);
  };

  const server: Server = createServer(onClient);
  return new Promise((resolveStart, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolveStart({
        port,
        url: `http://127.0.0.1:${port}`,
        connections: () => clients,
        close: () =>
          new Promise<void>((done) => {
            closed = true;
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
