import { expect, test } from "bun:test";
import { eventually, rawClient } from "../testing/sockets.ts";
import { startEgressProxy } from "./egress_proxy.ts";

// The egress proxy's fixed backstop timers, kept out of its mutation focused set (scripts/mutation)
// because each test waits the timer's full length; docs/mutation/egress_proxy.md lists the hand mutant
// each one kills.

test("a client that keeps its side open after an answer is dropped 2 s later: it holds no connection slot", async () => {
  const p = await startEgressProxy({});
  try {
    const c = rawClient(p.port, { allowHalfOpen: true });
    c.sock.write("GET / HTTP/1.1\r\n\r\n");
    expect(await c.until((t) => t.endsWith("proxied\n"))).toStartWith("HTTP/1.1 400");
    await new Promise((r) => setTimeout(r, 1_000));
    // Answered and ended by the proxy, still open from the client's side.
    expect(p.connections()).toBe(1);
    expect(await eventually(() => p.connections() === 0, 2_500)).toBe(true);
    c.sock.destroy();
  } finally {
    await p.close();
  }
});
