import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GuardedFetchError, type GuardedFetchOptions, guardedFetch, resolvePinned } from "./guarded_fetch.ts";
import { createTlsFixture, type TlsFixture } from "./tls_fixture.ts";

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
      "network",
    );
    expect(await failure(guardedFetch(`https://localhost:${port}/missing`, opts()))).toBe("http_status");
  });
});
