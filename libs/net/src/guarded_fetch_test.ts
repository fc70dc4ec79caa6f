import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server as TcpServer } from "node:net";
import { createTlsFixture, type TlsFixture } from "../testing/tls.ts";
import {
  GuardedFetchError,
  type GuardedFetchOptions,
  guardedFetch,
  type Resolver,
  resolvePinned,
} from "./guarded_fetch.ts";
import { LOCAL_NETWORK_HINT } from "./local_network.ts";

const PNG = Uint8Array.from(
  Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex"),
);

let tls: TlsFixture;
let server: ReturnType<typeof Bun.serve>;
let port: number;
let hits = 0;
const stalled: (() => void)[] = [];

beforeAll(() => {
  tls = createTlsFixture();
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch(req) {
      hits++;
      const url = new URL(req.url);
      const n = Number(url.searchParams.get("n") ?? 0);
      switch (url.pathname) {
        case "/img.png":
          return new Response(PNG, { headers: { "content-type": "text/plain" } });
        case "/hop":
          return n > 0
            ? Response.redirect(`https://localhost:${port}/hop?n=${n - 1}`, 302)
            : new Response(PNG);
        case "/to":
          return new Response(null, { status: 302, headers: { location: url.searchParams.get("u")! } });
        case "/big-declared":
          return new Response(new Uint8Array(5000));
        case "/big-streamed":
          return new Response(
            new ReadableStream({
              pull(c) {
                c.enqueue(new Uint8Array(1000));
              },
            }),
          );
        case "/slow":
          await new Promise<void>((r) => stalled.push(r));
          return new Response(PNG);
        case "/missing":
          return new Response("no", { status: 404 });
      }
      return new Response("?", { status: 500 });
    },
  });
  port = server.port!;
});

afterAll(() => {
  for (const r of stalled) r();
  server.stop(true);
});

const opts = (o: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({
  maxBytes: 4096,
  timeoutMs: 5000,
  maxRedirects: 3,
  allowHosts: [`localhost:${port}`, `127.0.0.1:${port}`],
  tls: { ca: tls.ca },
  ...o,
});

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(GuardedFetchError);
    return (err as GuardedFetchError).kind;
  }
  throw new Error("expected the fetch to fail");
}

describe("guarded fetch against a local HTTPS fixture (self-signed CA)", () => {
  test("fetches an exempt host's bytes, resolving the name once and pinning the connection", async () => {
    const out = await guardedFetch(`https://localhost:${port}/img.png`, opts());
    expect(out.body).toEqual(PNG);
    expect(out.status).toBe(200);
  });

  test("a host outside FETCH_ALLOW_HOSTS is refused before any connection", async () => {
    const before = hits;
    expect(await failure(guardedFetch(`https://localhost:${port}/img.png`, opts({ allowHosts: [] })))).toBe(
      "blocked",
    );
    expect(await failure(guardedFetch(`https://127.0.0.1:${port}/img.png`, opts({ allowHosts: [] })))).toBe(
      "blocked",
    );
    expect(hits).toBe(before);
  });

  test("a name resolving to a non-public address is refused after DNS (nothing exempt)", async () => {
    const target = {
      url: new URL("https://localhost/"),
      host: "localhost",
      port: 443,
      literal: null,
      exempt: false,
    };
    await expect(resolvePinned(target)).rejects.toMatchObject({ kind: "blocked" });
  });

  test("redirects are followed up to the cap and refused beyond it", async () => {
    expect((await guardedFetch(`https://localhost:${port}/hop?n=3`, opts())).body).toEqual(PNG);
    expect(await failure(guardedFetch(`https://localhost:${port}/hop?n=4`, opts()))).toBe(
      "too_many_redirects",
    );
  });

  test("every redirect target is re-checked: a hop to a private or non-https address is refused", async () => {
    const to = (u: string) => `https://localhost:${port}/to?u=${encodeURIComponent(u)}`;
    expect(await failure(guardedFetch(to("https://169.254.169.254/latest/meta-data"), opts()))).toBe(
      "blocked",
    );
    expect(await failure(guardedFetch(to("https://[::ffff:127.0.0.1]:1/"), opts()))).toBe("blocked");
    expect(await failure(guardedFetch(to(`http://localhost:${port}/img.png`), opts()))).toBe("invalid_url");
  });

  test("the size cap applies to declared and to streamed bodies", async () => {
    expect(await failure(guardedFetch(`https://localhost:${port}/big-declared`, opts()))).toBe("too_large");
    expect(await failure(guardedFetch(`https://localhost:${port}/big-streamed`, opts()))).toBe("too_large");
  });

  test("the time cap aborts a host that does not answer", async () => {
    const started = Date.now();
    expect(await failure(guardedFetch(`https://localhost:${port}/slow`, opts({ timeoutMs: 300 })))).toBe(
      "timeout",
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test("a certificate from an untrusted CA fails, and a non-2xx answer is an error", async () => {
    expect(await failure(guardedFetch(`https://localhost:${port}/img.png`, opts({ tls: undefined })))).toBe(
      "tls",
    );
    expect(await failure(guardedFetch(`https://localhost:${port}/missing`, opts()))).toBe("http_status");
  });
});

// Loopback only: names go through an injected resolver, and every address it returns is 127.0.0.1 or ::1.
describe("a failed fetch says why in words, and keeps its cause", () => {
  const tcpServers: TcpServer[] = [];
  let expired: ReturnType<typeof Bun.serve>;
  afterAll(() => {
    for (const s of tcpServers) s.close();
    expired?.stop(true);
  });
  const tcp = async (onConnection: (socket: import("node:net").Socket) => void) => {
    const srv = createServer(onConnection);
    tcpServers.push(srv);
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    return (srv.address() as { port: number }).port;
  };
  const failed = async (p: Promise<unknown>): Promise<GuardedFetchError> => {
    try {
      await p;
    } catch (err) {
      expect(err).toBeInstanceOf(GuardedFetchError);
      return err as GuardedFetchError;
    }
    throw new Error("expected the fetch to fail");
  };
  const resolver =
    (table: Record<string, string[] | Error>): Resolver =>
    async (host) => {
      const entry = table[host];
      if (entry === undefined)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      if (entry instanceof Error) throw entry;
      return entry.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    };
  // What no message may carry: the libraries' own texts and codes.
  const LIBRARY_TEXT =
    /ERR_|EAI_|ENOTFOUND|ECONN|SSL routines|unable to verify|altnames|Socket is closed|getaddrinfo|OPENSSL/i;
  const words = (e: GuardedFetchError) => {
    expect(e.message).not.toMatch(LIBRARY_TEXT);
    return e.message;
  };

  test("a name that does not resolve, or whose lookup fails for now, is a dns failure naming it", async () => {
    const before = hits;
    const resolve = resolver({
      "flaky.example": Object.assign(new Error("getaddrinfo EAI_AGAIN flaky.example"), { code: "EAI_AGAIN" }),
      "empty.example": [],
    });
    const gone = await failed(guardedFetch("https://nowhere.example/a.png", opts({ resolve })));
    expect([gone.kind, words(gone)]).toEqual([
      "dns",
      "the name nowhere.example does not resolve (no such host)",
    ]);
    expect(gone.code).toBe("ENOTFOUND");
    expect((gone.cause as Error).message).toContain("ENOTFOUND");
    const flaky = await failed(guardedFetch("https://flaky.example/a.png", opts({ resolve })));
    expect([flaky.kind, words(flaky)]).toEqual([
      "dns",
      "the name flaky.example could not be resolved right now (the DNS lookup failed; try again later)",
    ]);
    const empty = await failed(guardedFetch("https://empty.example/a.png", opts({ resolve })));
    expect(words(empty)).toContain("does not resolve");
    expect(hits).toBe(before);
  });

  test("a name that resolves to a private address is blocked, naming the name and the range, before connecting", async () => {
    const before = hits;
    const resolve = resolver({ "intranet.example": ["127.0.0.1"], "v6.example": ["::1"] });
    const e = await failed(guardedFetch(`https://intranet.example:${port}/img.png`, opts({ resolve })));
    expect([e.kind, words(e)]).toEqual([
      "blocked",
      // …and how to allow it while developing (ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT).
      `intranet.example resolves to a non-public address: loopback (127/8); ${LOCAL_NETWORK_HINT}`,
    ]);
    expect((await failed(guardedFetch(`https://v6.example:${port}/img.png`, opts({ resolve })))).kind).toBe(
      "blocked",
    );
    expect(hits).toBe(before);
  });

  test("a port where nothing listens is a refused connection", async () => {
    const closed = await tcp(() => {});
    tcpServers.pop()!.close();
    const e = await failed(
      guardedFetch(`https://127.0.0.1:${closed}/a.png`, opts({ allowHosts: [`127.0.0.1:${closed}`] })),
    );
    expect([e.kind, words(e)]).toEqual([
      "refused",
      `127.0.0.1:${closed} refused the connection (nothing listens there)`,
    ]);
    expect(e.code).toBe("ECONNREFUSED");
  });

  test("each TLS failure says it in words: untrusted, wrong name, expired, not TLS, closed during the handshake", async () => {
    const untrusted = await failed(
      guardedFetch(`https://localhost:${port}/img.png`, opts({ tls: undefined })),
    );
    expect([untrusted.kind, words(untrusted)]).toEqual([
      "tls",
      "the server's certificate is not trusted (it is not signed by an authority this server trusts)",
    ]);
    expect(untrusted.cause).toBeDefined();

    const resolve = resolver({ "other.test": ["127.0.0.1"] });
    const wrongName = await failed(
      guardedFetch(
        `https://other.test:${port}/img.png`,
        opts({ resolve, allowHosts: [`other.test:${port}`] }),
      ),
    );
    expect([wrongName.kind, words(wrongName)]).toEqual([
      "tls",
      "the server's certificate is not valid for other.test (it names other hosts)",
    ]);

    const old = createTlsFixture({ expired: true });
    expired = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: old.cert, key: old.key },
      fetch: () => new Response(PNG),
    });
    const stale = await failed(
      guardedFetch(`https://localhost:${expired.port}/a.png`, {
        ...opts({ allowHosts: [`localhost:${expired.port}`] }),
        tls: { ca: old.ca },
      }),
    );
    expect([stale.kind, words(stale)]).toEqual(["tls", "the server's certificate has expired"]);

    const plain = await tcp((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi"));
    const notTls = await failed(
      guardedFetch(`https://localhost:${plain}/`, opts({ allowHosts: [`localhost:${plain}`] })),
    );
    expect([notTls.kind, words(notTls)]).toEqual([
      "tls",
      "the TLS handshake with localhost failed (the server does not speak HTTPS there, or no common protocol)",
    ]);

    const hangUp = await tcp((socket) => socket.destroy());
    const closed = await failed(
      guardedFetch(`https://localhost:${hangUp}/`, opts({ allowHosts: [`localhost:${hangUp}`] })),
    );
    expect(words(closed)).toBe(`localhost:${hangUp} closed the connection during the TLS handshake`);
  });

  test("a timeout says where the host stalled: resolving, in the handshake, waiting for the answer", async () => {
    const never: Resolver = () => new Promise(() => {});
    const dns = await failed(
      guardedFetch("https://slow-dns.example/a.png", opts({ resolve: never, timeoutMs: 200 })),
    );
    expect([dns.kind, words(dns)]).toEqual([
      "timeout",
      "the remote host did not answer within 200 ms (while its name was being resolved)",
    ]);
    const silent = await tcp(() => {});
    const handshake = await failed(
      guardedFetch(
        `https://localhost:${silent}/`,
        opts({ allowHosts: [`localhost:${silent}`], timeoutMs: 300 }),
      ),
    );
    expect(words(handshake)).toBe("the remote host did not answer within 300 ms (during the TLS handshake)");
    const waiting = await failed(guardedFetch(`https://localhost:${port}/slow`, opts({ timeoutMs: 300 })));
    expect(words(waiting)).toBe(
      "the remote host did not answer within 300 ms (while waiting for its answer)",
    );
  });
});
