import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { closedWithin, rawClient, tcpServer } from "../testing/sockets.ts";
import { type EgressProxy, type EgressRefusal, startEgressProxy } from "./egress_proxy.ts";

let echo: Awaited<ReturnType<typeof tcpServer>>;
let forbidden: Awaited<ReturnType<typeof tcpServer>>;
let web: Awaited<ReturnType<typeof tcpServer>>;
let webHeads: string[] = [];
let proxy: EgressProxy;
let refused: EgressRefusal[] = [];

beforeAll(async () => {
  echo = await tcpServer((s) => s.pipe(s));
  forbidden = await tcpServer((s) => s.end("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret"));
  // A plain HTTP origin that records each request head and answers one response per connection.
  web = await tcpServer((s) => {
    let buf = "";
    s.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      webHeads.push(buf.slice(0, end));
      buf = buf.slice(end + 4);
      s.end("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
    });
  });
  proxy = await startEgressProxy({
    allowHosts: [`127.0.0.1:${echo.port}`, `127.0.0.1:${web.port}`],
    onRefused: (r) => refused.push(r),
  });
});

afterAll(async () => {
  await proxy.close();
  await Promise.all([echo.close(), forbidden.close(), web.close()]);
});

describe("CONNECT tunnels", () => {
  test("a CONNECT to an allowed host:port gets 200 and carries bytes both ways", async () => {
    const c = rawClient(proxy.port);
    c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: 127.0.0.1:${echo.port}\r\n\r\n`);
    await c.until((t) => t.includes("\r\n\r\n"));
    expect(c.text()).toStartWith("HTTP/1.1 200");
    c.sock.write("ping over the tunnel");
    expect(await c.until((t) => t.endsWith("ping over the tunnel"))).toEndWith("ping over the tunnel");
    c.sock.destroy();
  });

  test("bytes sent right behind the CONNECT head (a TLS hello) reach the target", async () => {
    const c = rawClient(proxy.port);
    c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nearly bytes`);
    expect(await c.until((t) => t.endsWith("early bytes"))).toStartWith("HTTP/1.1 200");
    c.sock.destroy();
  });

  test.each([
    ["127.0.0.1", "loopback"],
    ["localhost", "local names"],
    ["[::1]", "loopback"],
    ["[::ffff:127.0.0.1]", "IPv4-mapped"],
    ["[::ffff:7f00:1]", "IPv4-mapped"],
    ["2130706433", "loopback"],
    ["0x7f.1", "loopback"],
    ["017700000001", "loopback"],
    ["127.1", "loopback"],
    ["intranet", "local names"],
  ])(
    "a CONNECT to %s on a port outside the allow list gets 403 and the target sees nothing",
    async (host, why) => {
      refused = [];
      const before = forbidden.accepted();
      const c = rawClient(proxy.port);
      c.sock.write(`CONNECT ${host}:${forbidden.port} HTTP/1.1\r\n\r\n`);
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 403");
      expect(forbidden.accepted()).toBe(before);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.port).toBe(forbidden.port);
      expect(refused[0]!.reason).toContain(why);
    },
  );

  test("the allow list names host and port: the allowed host on another port is refused", async () => {
    refused = [];
    const c = rawClient(proxy.port);
    c.sock.write(`CONNECT 127.0.0.1:${forbidden.port} HTTP/1.1\r\n\r\n`);
    await c.closed;
    expect(c.text()).toStartWith("HTTP/1.1 403");
    expect(refused[0]).toMatchObject({ host: "127.0.0.1", port: forbidden.port });
  });

  test("a malformed CONNECT or origin-form request is 400, not forwarded", async () => {
    for (const head of [
      "CONNECT nohostport HTTP/1.1",
      "GET / HTTP/1.1",
      "GET https://x.example/ HTTP/1.1",
      "NONSENSE",
    ]) {
      const c = rawClient(proxy.port);
      c.sock.write(`${head}\r\nHost: 127.0.0.1\r\n\r\n`);
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 400");
    }
  });
});

describe("DNS is resolved once by the proxy and the connection pinned to the checked answer", () => {
  const PUBLIC = "93.184.216.34";

  async function resolverProxy(answers: { address: string; family: number }[][], allowHosts: string[] = []) {
    let calls = 0;
    const dialed: string[] = [];
    const seen: EgressRefusal[] = [];
    const p = await startEgressProxy({
      allowHosts,
      onRefused: (r) => seen.push(r),
      resolve: async () => answers[Math.min(calls++, answers.length - 1)]!,
      // The test never leaves loopback: the connection meant for the checked address lands on the echo server.
      dial: (address, port) => {
        dialed.push(`${address}:${port}`);
        return connect(echo.port, "127.0.0.1");
      },
    });
    return { p, dialed, seen, calls: () => calls };
  }

  test("a host answering a public address, then loopback, is pinned to the first checked answer", async () => {
    const r = await resolverProxy([[{ address: PUBLIC, family: 4 }], [{ address: "127.0.0.1", family: 4 }]]);
    try {
      const c = rawClient(r.p.port);
      c.sock.write(`CONNECT rebind.example:${forbidden.port} HTTP/1.1\r\n\r\n`);
      await c.until((t) => t.includes("\r\n\r\n"));
      expect(c.text()).toStartWith("HTTP/1.1 200");
      expect(r.calls()).toBe(1);
      expect(r.dialed).toEqual([`${PUBLIC}:${forbidden.port}`]);
      c.sock.destroy();
      // The next connection sees the rebound answer: refused before any connection is made.
      const before = forbidden.accepted();
      const again = rawClient(r.p.port);
      again.sock.write(`CONNECT rebind.example:${forbidden.port} HTTP/1.1\r\n\r\n`);
      await again.closed;
      expect(again.text()).toStartWith("HTTP/1.1 403");
      expect(r.dialed).toHaveLength(1);
      expect(forbidden.accepted()).toBe(before);
      expect(r.seen[0]).toMatchObject({ host: "rebind.example", port: forbidden.port });
      expect(r.seen[0]!.reason).toContain("loopback");
    } finally {
      await r.p.close();
    }
  });

  test.each([
    [
      [
        { address: PUBLIC, family: 4 },
        { address: "10.1.2.3", family: 4 },
      ],
      "private",
    ],
    [[{ address: "::ffff:10.0.0.1", family: 6 }], "IPv4-mapped"],
    [[{ address: "169.254.169.254", family: 4 }], "link-local"],
    [[{ address: "fd00::1", family: 6 }], "unique local"],
  ])("an answer with any non-public address (%j) is refused without a connection", async (answer, why) => {
    const r = await resolverProxy([answer]);
    try {
      const c = rawClient(r.p.port);
      c.sock.write(`GET http://shop.example/ HTTP/1.1\r\nHost: shop.example\r\n\r\n`);
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 403");
      expect(r.dialed).toEqual([]);
      expect(r.seen[0]).toMatchObject({ host: "shop.example", port: 80, url: "http://shop.example/" });
      expect(r.seen[0]!.reason).toContain(why);
    } finally {
      await r.p.close();
    }
  });

  test("a host name listed in FETCH_ALLOW_HOSTS is exempt, exactly as for imports", async () => {
    const r = await resolverProxy([[{ address: "127.0.0.1", family: 4 }]], ["app.test:8080"]);
    try {
      const ok = rawClient(r.p.port);
      ok.sock.write("CONNECT app.test:8080 HTTP/1.1\r\n\r\n");
      expect(await ok.until((t) => t.includes("\r\n\r\n"))).toStartWith("HTTP/1.1 200");
      expect(r.dialed).toEqual(["127.0.0.1:8080"]);
      ok.sock.destroy();
      const other = rawClient(r.p.port);
      other.sock.write("CONNECT app.test:8081 HTTP/1.1\r\n\r\n");
      await other.closed;
      expect(other.text()).toStartWith("HTTP/1.1 403");
    } finally {
      await r.p.close();
    }
  });

  test("a name that does not resolve is 502, not a refusal", async () => {
    const p = await startEgressProxy({
      resolve: async () => {
        throw new Error("ENOTFOUND");
      },
    });
    try {
      const c = rawClient(p.port);
      c.sock.write("CONNECT nowhere.example:443 HTTP/1.1\r\n\r\n");
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 502");
    } finally {
      await p.close();
    }
  });
});

describe("absolute-form plain HTTP", () => {
  test("a GET is forwarded in origin form with Host from the URL and Connection: close", async () => {
    webHeads = [];
    const c = rawClient(proxy.port);
    c.sock.write(
      `GET http://127.0.0.1:${web.port}/path/x?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n` +
        "Proxy-Connection: keep-alive\r\nConnection: keep-alive, X-Drop\r\nX-Drop: 1\r\nAccept: text/plain\r\n\r\n",
    );
    await c.closed;
    expect(c.text()).toStartWith("HTTP/1.1 200");
    expect(c.text()).toEndWith("hello");
    const lines = webHeads[0]!.split("\r\n");
    expect(lines[0]).toBe("GET /path/x?q=1 HTTP/1.1");
    expect(lines).toContain(`Host: 127.0.0.1:${web.port}`);
    expect(lines).toContain("Connection: close");
    expect(lines).toContain("Accept: text/plain");
    expect(webHeads[0]).not.toContain("Proxy-Connection");
    expect(webHeads[0]).not.toContain("X-Drop");
    expect(webHeads[0]).not.toContain("elsewhere");
  });

  test("a request body follows the head", async () => {
    const got: string[] = [];
    const sink = await tcpServer((s) => {
      let buf = "";
      s.on("data", (d: Buffer) => {
        buf += d.toString("latin1");
        if (buf.endsWith("body!")) {
          got.push(buf);
          s.end("HTTP/1.1 204 No Content\r\n\r\n");
        }
      });
    });
    const p = await startEgressProxy({ allowHosts: [`127.0.0.1:${sink.port}`] });
    try {
      const c = rawClient(p.port);
      c.sock.write(`POST http://127.0.0.1:${sink.port}/in HTTP/1.1\r\nContent-Length: 5\r\n\r\nbo`);
      c.sock.write("dy!");
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 204");
      expect(got[0]).toStartWith("POST /in HTTP/1.1");
    } finally {
      await p.close();
      await sink.close();
    }
  });

  test("a GET to a port outside the allow list is 403, reported with its URL, and not connected", async () => {
    refused = [];
    const before = forbidden.accepted();
    const c = rawClient(proxy.port);
    c.sock.write(`GET http://127.0.0.1:${forbidden.port}/admin?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await c.closed;
    expect(c.text()).toStartWith("HTTP/1.1 403");
    expect(c.text()).toContain("X-Egress-Proxy: refused");
    expect(forbidden.accepted()).toBe(before);
    expect(refused).toEqual([
      {
        host: "127.0.0.1",
        port: forbidden.port,
        reason: expect.stringContaining("loopback"),
        url: `http://127.0.0.1:${forbidden.port}/admin`,
      },
    ]);
  });

  test("a keep-alive connection cannot carry a second request to another host", async () => {
    webHeads = [];
    const before = forbidden.accepted();
    const c = rawClient(proxy.port);
    c.sock.write(`GET http://127.0.0.1:${web.port}/one HTTP/1.1\r\nConnection: keep-alive\r\n\r\n`);
    await c.until((t) => t.endsWith("hello"));
    c.sock.write(`GET http://127.0.0.1:${forbidden.port}/two HTTP/1.1\r\n\r\n`);
    expect(await closedWithin(c, 3_000)).toBe(true);
    expect(forbidden.accepted()).toBe(before);
    expect(webHeads).toHaveLength(1);
  });
});

describe("WebSocket upgrades on plain HTTP", () => {
  const ws = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, server) => (server.upgrade(req) ? undefined : new Response("no upgrade", { status: 400 })),
    websocket: { message: (socket, msg) => void socket.send(`echo:${msg}`) },
  });
  afterAll(() => void ws.stop(true));

  const upgradeHead = (port: number) =>
    `GET ws://127.0.0.1:${port}/socket HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
    `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`;

  /** One masked client text frame (short payload). */
  const frame = (text: string) => {
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
  };

  test("an Upgrade: websocket to an allowed host switches protocols and carries frames", async () => {
    const p = await startEgressProxy({ allowHosts: [`127.0.0.1:${ws.port}`] });
    try {
      const c = rawClient(p.port);
      c.sock.write(upgradeHead(ws.port!));
      expect(await c.until((t) => t.includes("\r\n\r\n"))).toStartWith("HTTP/1.1 101");
      c.sock.write(frame("hi"));
      expect(await c.until((t) => t.includes("echo:hi"))).toContain("echo:hi");
      c.sock.destroy();
    } finally {
      await p.close();
    }
  });

  test("an Upgrade: websocket to a port outside the allow list is 403 and never connected", async () => {
    refused = [];
    const before = forbidden.accepted();
    const c = rawClient(proxy.port);
    c.sock.write(upgradeHead(forbidden.port));
    await c.closed;
    expect(c.text()).toStartWith("HTTP/1.1 403");
    expect(forbidden.accepted()).toBe(before);
    expect(refused[0]).toMatchObject({ host: "127.0.0.1", port: forbidden.port });
  });
});

describe("bounds", () => {
  test("a request head over the cap is 431", async () => {
    const p = await startEgressProxy({ maxHeaderBytes: 1024 });
    try {
      const c = rawClient(p.port);
      c.sock.write(`GET http://a.example/ HTTP/1.1\r\nX-Big: ${"a".repeat(2000)}`);
      await c.closed;
      expect(c.text()).toStartWith("HTTP/1.1 431");
    } finally {
      await p.close();
    }
  });

  test("a client that sends no head is dropped after the head timeout", async () => {
    const p = await startEgressProxy({ headTimeoutMs: 200 });
    try {
      const c = rawClient(p.port);
      c.sock.write("CONNECT 127.0.0.1:");
      expect(await closedWithin(c, 2_000)).toBe(true);
    } finally {
      await p.close();
    }
  });

  test("an idle tunnel is closed after the idle timeout", async () => {
    const p = await startEgressProxy({ allowHosts: [`127.0.0.1:${echo.port}`], idleTimeoutMs: 300 });
    try {
      const c = rawClient(p.port);
      c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
      await c.until((t) => t.includes("\r\n\r\n"));
      expect(await closedWithin(c, 3_000)).toBe(true);
    } finally {
      await p.close();
    }
  });

  test("connections over the cap are answered 503", async () => {
    const p = await startEgressProxy({ maxConnections: 1 });
    try {
      const first = rawClient(p.port);
      first.sock.write("CONNECT 127.0.0.1:");
      await new Promise((r) => setTimeout(r, 100));
      const second = rawClient(p.port);
      await second.closed;
      expect(second.text()).toStartWith("HTTP/1.1 503");
      first.sock.destroy();
    } finally {
      await p.close();
    }
  });

  test("close() destroys every open tunnel", async () => {
    const p = await startEgressProxy({ allowHosts: [`127.0.0.1:${echo.port}`] });
    const c = rawClient(p.port);
    c.sock.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
    await c.until((t) => t.includes("\r\n\r\n"));
    expect(p.connections()).toBe(1);
    await p.close();
    expect(await closedWithin(c, 2_000)).toBe(true);
  });
});
