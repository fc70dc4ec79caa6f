import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { connect, Socket } from "node:net";
import {
  closedPort,
  closedWithin,
  eventually,
  rawClient,
  type TcpServer,
  tcpServer,
} from "../testing/sockets.ts";
import { type EgressRefusal, startEgressProxy } from "./egress_proxy.ts";

// The exact edges of the egress proxy: every answer's words, the request-head parser's limits, the
// deadlines, and what happens when a client or upstream goes away half-way. Every connection stays on
// loopback: targets are 127.0.0.1 servers, and names resolve through an injected resolver.

/** The proxy's own answer, byte for byte: status line, the four headers, the text and its newline. */
const answerText = (status: string, kind: string, text: string) =>
  `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(`${text}\n`)}\r\n` +
  `X-Egress-Proxy: ${kind}\r\nConnection: close\r\n\r\n${text}\n`;
const bad = (text: string) => answerText("400 Bad Request", "invalid", text);
const ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";
const PUBLIC = "93.184.216.34";

let echo: TcpServer;
let web: TcpServer;
let webHeads: string[] = [];

beforeAll(async () => {
  echo = await tcpServer((s) => s.pipe(s));
  web = await tcpServer((s) => {
    let buf = "";
    s.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      webHeads.push(buf.slice(0, end));
      s.end("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    });
  });
});
afterAll(async () => {
  await Promise.all([echo.close(), web.close()]);
});

/** A proxy for one test, closed afterwards; refusals collected. */
async function withProxy(
  opts: Parameters<typeof startEgressProxy>[0],
  fn: (p: Awaited<ReturnType<typeof startEgressProxy>>, refused: EgressRefusal[]) => Promise<void>,
) {
  const refused: EgressRefusal[] = [];
  const p = await startEgressProxy({ onRefused: (r) => refused.push(r), ...opts });
  try {
    await fn(p, refused);
  } finally {
    await p.close();
  }
}

/** Sends `raw` and returns everything the proxy answered before it closed the connection. */
async function exchange(port: number, raw: string): Promise<string> {
  const c = rawClient(port);
  c.sock.write(raw);
  await c.closed;
  return c.text();
}

/** A resolver held until the test releases it with the answer it gives. */
function heldResolver() {
  let release: (a: { address: string; family: number }[]) => void = () => {};
  let asked = false;
  const answer = new Promise<{ address: string; family: number }[]>((r) => {
    release = r;
  });
  return {
    resolve: async () => {
      asked = true;
      return answer;
    },
    asked: () => asked,
    release: (a: { address: string; family: number }[]) => release(a),
  };
}

describe("the proxy's answers, word for word", () => {
  test("a refusal is a 403 naming the target and the guard's reason, and is reported once", async () => {
    await withProxy({}, async (p, refused) => {
      const port = await closedPort();
      const text = await exchange(p.port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.reason).toStartWith("address not allowed: loopback");
      expect(text).toBe(
        answerText("403 Forbidden", "refused", `refused: 127.0.0.1:${port}: ${refused[0]!.reason}`),
      );
    });
  });

  test("a refused request names the URL as asked: ws:// stays ws://, http:// stays http://", async () => {
    await withProxy({}, async (p, refused) => {
      const port = await closedPort();
      for (const scheme of ["ws", "http"]) {
        const text = await exchange(
          p.port,
          `GET ${scheme}://127.0.0.1:${port}/live?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
        );
        expect(text).toStartWith("HTTP/1.1 403 Forbidden\r\n");
      }
      expect(refused.map((r) => r.url)).toEqual([
        `ws://127.0.0.1:${port}/live`,
        `http://127.0.0.1:${port}/live`,
      ]);
    });
  });

  test.each([
    ["CONNECT nohostport HTTP/1.1", "CONNECT needs host:port"],
    ["CONNECT 127.0.0.1:0 HTTP/1.1", "CONNECT needs host:port"],
    ["CONNECT 127.0.0.1:65536 HTTP/1.1", "CONNECT needs host:port"],
    ["CONNECT bad<host.example:443 HTTP/1.1", "not a valid target"],
    ["GET / HTTP/1.1", "only absolute-form requests are proxied"],
    ["GET https://shop.example/ HTTP/1.1", "only http:// requests and CONNECT are proxied"],
    ["GET ftp://shop.example/ HTTP/1.1", "only http:// requests and CONNECT are proxied"],
    ["NONSENSE", "malformed request head"],
  ])("%s is answered 400: %s", async (line, why) => {
    await withProxy({}, async (p, refused) => {
      expect(await exchange(p.port, `${line}\r\nHost: x\r\n\r\n`)).toBe(bad(why));
      expect(refused).toEqual([]);
    });
  });

  test("an empty request head (CRLF CRLF first) is malformed at once, not waited on", async () => {
    await withProxy({ headTimeoutMs: 5_000 }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write("\r\n\r\n");
      expect(await closedWithin(c, 1_000)).toBe(true);
      expect(c.text()).toBe(bad("malformed request head"));
    });
  });

  test("a name that does not resolve is 502 naming the host", async () => {
    const resolve = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    await withProxy({ resolve }, async (p, refused) => {
      expect(await exchange(p.port, "CONNECT nowhere.example:443 HTTP/1.1\r\n\r\n")).toBe(
        answerText("502 Bad Gateway", "unreachable", "could not resolve nowhere.example"),
      );
      expect(refused).toEqual([]);
    });
  });

  test("an allowed target that refuses the TCP connection is 502, at once", async () => {
    const port = await closedPort();
    await withProxy({ allowHosts: [`127.0.0.1:${port}`] }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      expect(await closedWithin(c, 2_000)).toBe(true);
      expect(c.text()).toBe(
        answerText("502 Bad Gateway", "unreachable", "the upstream host refused the connection"),
      );
    });
  });

  test("DNS and the upstream connection share one deadline: 504 when it passes", async () => {
    const dns = heldResolver();
    await withProxy({ resolve: dns.resolve, connectTimeoutMs: 200 }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write("CONNECT slow.example:443 HTTP/1.1\r\n\r\n");
      expect(await closedWithin(c, 2_000)).toBe(true);
      expect(c.text()).toBe(
        answerText("504 Gateway Timeout", "unreachable", "the upstream host did not answer in time"),
      );
    });
  });

  test("a client over the connection cap gets 503; a place freed is taken again", async () => {
    await withProxy({ maxConnections: 2, allowHosts: [`127.0.0.1:${web.port}`] }, async (p) => {
      const first = rawClient(p.port);
      const second = rawClient(p.port);
      first.sock.write("CONNECT 127.0.0.1:");
      second.sock.write("CONNECT 127.0.0.1:");
      expect(await eventually(() => p.connections() === 2)).toBe(true);
      expect(await closedWithin(second, 200)).toBe(false);
      const third = rawClient(p.port);
      await third.closed;
      expect(third.text()).toBe(answerText("503 Service Unavailable", "busy", "too many connections"));
      first.sock.destroy();
      expect(await eventually(() => p.connections() === 1)).toBe(true);
      const fourth = await exchange(p.port, `GET http://127.0.0.1:${web.port}/ HTTP/1.1\r\n\r\n`);
      expect(fourth).toEndWith("hello");
      second.sock.destroy();
      expect(await eventually(() => p.connections() === 0)).toBe(true);
    });
  });
});

describe("the CONNECT authority and port", () => {
  test.each([
    ["a user before the host", (port: number) => `junk@127.0.0.1:${port}`],
    ["a path after the port", (port: number) => `127.0.0.1:${port}/x`],
    ["a second port", (port: number) => `127.0.0.1:1:${port}`],
  ])("an authority with %s is 400, never a tunnel to the host inside it", async (_, authority) => {
    await withProxy({ allowHosts: [`127.0.0.1:${echo.port}`] }, async (p) => {
      const before = echo.accepted();
      expect(await exchange(p.port, `CONNECT ${authority(echo.port)} HTTP/1.1\r\n\r\n`)).toBe(
        bad("CONNECT needs host:port"),
      );
      expect(echo.accepted()).toBe(before);
    });
  });

  test.each([1, 65535])("port %d is a valid port: the guard decides (loopback: 403)", async (port) => {
    await withProxy({}, async (p, refused) => {
      const text = await exchange(p.port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      expect(text).toStartWith("HTTP/1.1 403 Forbidden\r\n");
      expect(refused).toEqual([{ host: "127.0.0.1", port, reason: expect.stringContaining("loopback") }]);
    });
  });

  test("ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT opens this machine to the proxy too", async () => {
    await withProxy({ localNetwork: true }, async (p, refused) => {
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nlocal`);
      expect(await c.until((t) => t.endsWith("local"))).toBe(`${ESTABLISHED}local`);
      expect(refused).toEqual([]);
      c.sock.destroy();
    });
  });
});

describe("the request head parser", () => {
  const target = () => `http://127.0.0.1:${web.port}/`;
  test.each([
    ["a lowercase prefix before the method", () => `xGET ${target()} HTTP/1.1\r\n\r\n`],
    ["text after the version", () => `GET ${target()} HTTP/1.1 extra\r\n\r\n`],
    ["a header line without a colon", () => `GET ${target()} HTTP/1.1\r\nNoColonHere\r\n\r\n`],
    ["a header line starting with a colon", () => `GET ${target()} HTTP/1.1\r\n: value\r\n\r\n`],
    ["a space before a header's colon", () => `GET ${target()} HTTP/1.1\r\nX-Pad : 1\r\n\r\n`],
    ["a header line folded (leading space)", () => `GET ${target()} HTTP/1.1\r\n X-Pad: 1\r\n\r\n`],
    ["a bare LF inside a header value", () => `GET ${target()} HTTP/1.1\r\nX-Pad: a\nGET /smuggled\r\n\r\n`],
    ["a NUL inside a header value", () => `GET ${target()} HTTP/1.1\r\nX-Pad: a\0b\r\n\r\n`],
  ])("%s is a malformed head: 400, nothing forwarded", async (_, raw) => {
    await withProxy({ allowHosts: [`127.0.0.1:${web.port}`] }, async (p) => {
      const before = web.accepted();
      expect(await exchange(p.port, raw())).toBe(bad("malformed request head"));
      expect(web.accepted()).toBe(before);
    });
  });

  test("URLs with credentials are refused (a user alone too), and not forwarded", async () => {
    await withProxy({ allowHosts: [`127.0.0.1:${web.port}`] }, async (p) => {
      const before = web.accepted();
      for (const auth of ["user:pw@", "user@", ":pw@"])
        expect(await exchange(p.port, `GET http://${auth}127.0.0.1:${web.port}/ HTTP/1.1\r\n\r\n`)).toBe(
          bad("URLs with credentials are refused"),
        );
      expect(web.accepted()).toBe(before);
    });
  });

  test("the head cap is inclusive: a head of exactly maxHeaderBytes passes, one byte more is 431", async () => {
    const head = (pad: number) => `GET http://127.0.0.1:${web.port}/ HTTP/1.1\r\nX-Pad: ${"a".repeat(pad)}`;
    const size = head(100).length;
    await withProxy({ allowHosts: [`127.0.0.1:${web.port}`], maxHeaderBytes: size }, async (p) => {
      // Exactly the cap, arriving before its terminator: waited on, then forwarded.
      const c = rawClient(p.port);
      c.sock.write(head(100));
      await new Promise((r) => setTimeout(r, 100));
      expect(c.text()).toBe("");
      c.sock.write("\r\n\r\n");
      expect(await c.until((t) => t.endsWith("hello"))).toStartWith("HTTP/1.1 200 OK");
      // One byte over, terminator in the same packet: refused without forwarding.
      const before = web.accepted();
      expect(await exchange(p.port, `${head(101)}\r\n\r\n`)).toBe(
        answerText("431 Request Header Fields Too Large", "invalid", "request head too large"),
      );
      // One byte over and still no terminator: refused without waiting for the rest.
      const open = rawClient(p.port);
      open.sock.write(head(101));
      await open.closed;
      expect(open.text()).toBe(
        answerText("431 Request Header Fields Too Large", "invalid", "request head too large"),
      );
      expect(web.accepted()).toBe(before);
    });
  });
});

describe("what is forwarded", () => {
  test("the upstream head is exactly: origin-form line, Host from the URL, end-to-end headers, Connection: close", async () => {
    await withProxy({ allowHosts: [`127.0.0.1:${web.port}`] }, async (p) => {
      webHeads = [];
      const text = await exchange(
        p.port,
        `GET http://127.0.0.1:${web.port}/p?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n` +
          "Keep-Alive: timeout=5\r\nProxy-Authorization: Basic c2VjcmV0\r\nProxy-Authenticate: Basic\r\nTE: trailers\r\n" +
          "Trailer: X-Sum\r\nUpgrade: websocket\r\nAccept: text/plain\r\nX-Note: accept, user-agent\r\nUser-Agent: t\r\n\r\n",
      );
      expect(text).toEndWith("hello");
      expect(webHeads).toEqual([
        [
          "GET /p?q=1 HTTP/1.1",
          `Host: 127.0.0.1:${web.port}`,
          "Accept: text/plain",
          "X-Note: accept, user-agent",
          "User-Agent: t",
          "Connection: close",
        ].join("\r\n"),
      ]);
    });
  });

  test("a plain http URL without a port goes to port 80 (checked as such)", async () => {
    await withProxy({}, async (p, refused) => {
      await exchange(p.port, "GET http://127.0.0.1/x HTTP/1.1\r\n\r\n");
      expect(refused).toEqual([
        {
          host: "127.0.0.1",
          port: 80,
          reason: expect.stringContaining("loopback"),
          url: "http://127.0.0.1/x",
        },
      ]);
    });
  });

  test("an IPv6 literal in an absolute-form URL is checked bracketed, as the guard expects", async () => {
    await withProxy({}, async (p, refused) => {
      const text = await exchange(p.port, "GET http://[::1]:8080/ HTTP/1.1\r\n\r\n");
      expect(text).toStartWith("HTTP/1.1 403 Forbidden\r\n");
      expect(refused).toEqual([
        { host: "[::1]", port: 8080, reason: expect.stringContaining("loopback"), url: "http://[::1]:8080/" },
      ]);
    });
  });

  test("bytes through a tunnel that look like a request head are tunnel bytes, never a second request", async () => {
    await withProxy({ allowHosts: [`127.0.0.1:${echo.port}`] }, async (p) => {
      const before = echo.accepted();
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
      await c.until((t) => t === ESTABLISHED);
      const inner = "GET / HTTP/1.1\r\nHost: inner\r\n\r\n";
      c.sock.write(inner);
      await c.until((t) => t.endsWith(inner));
      c.sock.write(inner);
      await c.until((t) => t === `${ESTABLISHED}${inner}${inner}`);
      await new Promise((r) => setTimeout(r, 100));
      expect(c.text()).toBe(`${ESTABLISHED}${inner}${inner}`);
      expect(echo.accepted()).toBe(before + 1);
      c.sock.destroy();
    });
  });
});

describe("WebSocket upgrade detection", () => {
  const ws = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, server) => (server.upgrade(req) ? undefined : new Response("no upgrade", { status: 400 })),
    websocket: { message: () => {} },
  });
  afterAll(() => void ws.stop(true));

  test.each([
    ["keep-alive, Upgrade", "HTTP/1.1 101"],
    ["Upgrade , keep-alive", "HTTP/1.1 101"],
    ["upgrades", "HTTP/1.1 400"],
    ["keep-alive", "HTTP/1.1 400"],
  ])("Connection: %s → %s", async (connection, status) => {
    await withProxy({ allowHosts: [`127.0.0.1:${ws.port}`] }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write(
        `GET ws://127.0.0.1:${ws.port}/s HTTP/1.1\r\nUpgrade: websocket\r\nConnection: ${connection}\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      expect(await c.until((t) => t.includes("\r\n\r\n"))).toStartWith(status);
      c.sock.destroy();
    });
  });
});

describe("a client or upstream that goes away half-way", () => {
  test.each([
    ["CONNECT", "CONNECT slow.example:443 HTTP/1.1\r\n\r\n"],
    ["plain HTTP", "GET http://slow.example/ HTTP/1.1\r\n\r\n"],
  ])(
    "%s: a client answered 504 while DNS ran is never connected upstream when the answer comes",
    async (_, raw) => {
      const dns = heldResolver();
      const dialed: string[] = [];
      const dial = (address: string, port: number) => {
        dialed.push(`${address}:${port}`);
        return connect(echo.port, "127.0.0.1");
      };
      await withProxy({ resolve: dns.resolve, dial, connectTimeoutMs: 200 }, async (p) => {
        // Half-open: the client keeps its side open after the 504, so only the proxy's own end marks it gone.
        const c = rawClient(p.port, { allowHalfOpen: true });
        c.sock.write(raw);
        expect(await c.until((t) => t.endsWith("in time\n"))).toStartWith("HTTP/1.1 504");
        dns.release([{ address: PUBLIC, family: 4 }]);
        await new Promise((r) => setTimeout(r, 100));
        expect(dialed).toEqual([]);
        c.sock.destroy();
      });
    },
  );

  test.each([
    ["CONNECT", (port: number) => `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\nearly bytes`],
    ["plain HTTP", (port: number) => `GET http://127.0.0.1:${port}/ HTTP/1.1\r\n\r\n`],
  ])("%s: a client answered 504 while the upstream connected gets nothing sent upstream", async (_, raw) => {
    const sink = await tcpServer(() => {});
    let finish = () => {};
    const dial = () => {
      const s = new Socket();
      finish = () => void s.connect(sink.port, "127.0.0.1");
      return s;
    };
    try {
      await withProxy({ allowHosts: [`127.0.0.1:${sink.port}`], dial, connectTimeoutMs: 200 }, async (p) => {
        const c = rawClient(p.port);
        c.sock.write(raw(sink.port));
        await c.closed;
        expect(c.text()).toStartWith("HTTP/1.1 504");
        finish();
        expect(await eventually(() => sink.closed() === 1)).toBe(true);
        expect(sink.received()).toBe("");
      });
    } finally {
      await sink.close();
    }
  });

  test("a dialer that throws drops the client at once", async () => {
    const dial = (): Socket => {
      throw new Error("no socket");
    };
    await withProxy({ allowHosts: [`127.0.0.1:${echo.port}`], dial, connectTimeoutMs: 5_000 }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
      expect(await closedWithin(c, 1_000)).toBe(true);
      expect(c.text()).toBe("");
    });
  });

  test("an upstream reset closes the tunnel's client: no proxy answer is written into the tunnel", async () => {
    const resetting = await tcpServer((s) => s.once("data", () => s.resetAndDestroy()));
    try {
      await withProxy({ allowHosts: [`127.0.0.1:${resetting.port}`] }, async (p) => {
        const c = rawClient(p.port);
        c.sock.write(`CONNECT 127.0.0.1:${resetting.port} HTTP/1.1\r\n\r\n`);
        await c.until((t) => t === ESTABLISHED);
        c.sock.write("hello");
        expect(await closedWithin(c, 2_000)).toBe(true);
        expect(c.text()).toBe(ESTABLISHED);
      });
    } finally {
      await resetting.close();
    }
  });

  test("a client reset while its target resolves does not take the proxy down", async () => {
    const dns = heldResolver();
    await withProxy({ resolve: dns.resolve, allowHosts: [`127.0.0.1:${web.port}`] }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write("CONNECT slow.example:443 HTTP/1.1\r\n\r\n");
      expect(await eventually(() => dns.asked())).toBe(true);
      c.sock.resetAndDestroy();
      expect(await eventually(() => p.connections() === 0)).toBe(true);
      dns.release([{ address: PUBLIC, family: 4 }]);
      expect(await exchange(p.port, `GET http://127.0.0.1:${web.port}/ HTTP/1.1\r\n\r\n`)).toEndWith("hello");
    });
  });

  test("an idle tunnel is closed with nothing written into it", async () => {
    await withProxy({ allowHosts: [`127.0.0.1:${echo.port}`], idleTimeoutMs: 300 }, async (p) => {
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
      expect(await closedWithin(c, 3_000)).toBe(true);
      expect(c.text()).toBe(ESTABLISHED);
    });
  });
});

describe("where the proxy listens", () => {
  test("on 127.0.0.1 only, as its url says: not on ::1, not on another address", async () => {
    await withProxy({}, async (p) => {
      expect(p.url).toBe(`http://127.0.0.1:${p.port}`);
      const v6 = connect({ port: p.port, host: "::1" });
      const outcome = await new Promise<string>((r) => {
        v6.once("connect", () => r("connected"));
        v6.once("error", (e: NodeJS.ErrnoException) => r(e.code ?? "error"));
      });
      v6.destroy();
      expect(outcome).toBe("ECONNREFUSED");
    });
  });
});
