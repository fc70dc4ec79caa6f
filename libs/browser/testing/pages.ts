/**
 * A page server on 127.0.0.1 for filming tests; `hits` counts requests per path. `idleTimeout` (seconds,
 * 0 = none; Bun's default 10) for pages held longer than that.
 */
export function servePages(
  pages: Record<string, (req: Request) => Response | Promise<Response>>,
  opts: { idleTimeout?: number } = {},
) {
  const hits = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: opts.idleTimeout,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const page = pages[path];
      return page ? page(req) : new Response("not found", { status: 404 });
    },
  });
  const host = `127.0.0.1:${server.port}`;
  return { host, url: (path: string) => `http://${host}${path}`, hits, stop: () => server.stop(true) };
}

/** An HTML answer. */
export function html(body: string, init: ResponseInit = {}): Response {
  return new Response(body, {
    ...init,
    headers: { "content-type": "text/html; charset=utf-8", ...init.headers },
  });
}

/** A product-like landing page that follows prefers-color-scheme. */
export const LANDING = `<!doctype html><html><head><meta charset="utf-8"><title>Lumen</title>
<style>:root{color-scheme:light dark}body{margin:0;font:16px system-ui,sans-serif;background:#f6f7fb;color:#111}
@media (prefers-color-scheme:dark){body{background:#0f1117;color:#eee}}
header{display:flex;justify-content:space-between;padding:24px 64px;font-weight:600}
.hero{padding:120px 64px}.hero h1{font-size:64px;margin:0 0 16px}.cta{display:inline-block;padding:14px 28px;border-radius:10px;background:#5b5bf7;color:#fff}
</style></head><body><header><span>Lumen</span><span>Pricing · Docs · Sign in</span></header>
<section class="hero"><h1>Ship pages that glow.</h1><p>Analytics for teams who care.</p><a class="cta">Start free</a></section></body></html>`;

/** Polls `fn` until it returns a value, or throws at the deadline. */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 50));
  }
}
