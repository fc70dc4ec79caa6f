import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkFetchTarget, isLocalNetworkAddress, TargetError } from "./address.ts";
import { startEgressProxy } from "./egress_proxy.ts";
import { GuardedFetchError, guardedFetch } from "./guarded_fetch.ts";

// A plain-http server on loopback, as a developer's own page or image server would be.
let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("local bytes") });
});
afterAll(() => server.stop(true));

const limits = { maxBytes: 1000, timeoutMs: 5000, maxRedirects: 2 };

describe("ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT (the localNetwork option)", () => {
  test("opens loopback, private and unique local addresses, never link-local or metadata", () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.20", "::1", "fd00::1"])
      expect(isLocalNetworkAddress(ip), ip).toBe(true);
    for (const ip of [
      "169.254.169.254",
      "fe80::1",
      "224.0.0.1",
      "0.0.0.0",
      "100.64.0.1",
      "8.8.8.8",
      "::ffff:127.0.0.1",
    ])
      expect(isLocalNetworkAddress(ip), ip).toBe(false);
    expect(() => checkFetchTarget("http://169.254.169.254/latest", [], { localNetwork: true })).toThrow(
      TargetError,
    );
  });

  test("without it, a private address is refused with how to allow it for development", async () => {
    expect(() => checkFetchTarget("https://192.168.1.20/a.png")).toThrow(
      /ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1/,
    );
    const refused = guardedFetch(`http://127.0.0.1:${server.port}/a.png`, limits);
    await expect(refused).rejects.toBeInstanceOf(GuardedFetchError);
  });

  test("with it, this machine's http server can be fetched; a public host still needs https", async () => {
    const got = await guardedFetch(`http://127.0.0.1:${server.port}/a.png`, {
      ...limits,
      localNetwork: true,
    });
    expect(new TextDecoder().decode(got.body)).toBe("local bytes");
    const named = await guardedFetch(`http://localhost:${server.port}/a.png`, {
      ...limits,
      localNetwork: true,
    });
    expect(named.status).toBe(200);
    await expect(
      guardedFetch("http://93.184.216.34/a.png", { ...limits, localNetwork: true }),
    ).rejects.toMatchObject({ kind: "invalid_url" });
  });
});

describe("the browser's egress proxy follows the same switch", () => {
  test("off: a page on this machine is refused with the hint; on: it is reached, metadata still is not", async () => {
    const page = `http://127.0.0.1:${server.port}/`;
    const strict = await startEgressProxy({});
    const open = await startEgressProxy({ localNetwork: true });
    try {
      const refused = await fetch(page, { proxy: strict.url });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain("ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1");
      const reached = await fetch(page, { proxy: open.url });
      expect(await reached.text()).toBe("local bytes");
      const metadata = await fetch("http://169.254.169.254/latest/meta-data", { proxy: open.url });
      expect(metadata.status).toBe(403);
    } finally {
      await strict.close();
      await open.close();
    }
  });
});
