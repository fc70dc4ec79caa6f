import { runInWriteScope, WriteScope } from "@site/db";
import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import { websocket as elysiaSockets } from "elysia/ws";
import { compressed } from "./compression.ts";

/** What the listener needs of the Elysia app. */
type ServedApp = {
  handle(request: Request): Promise<Response>;
  server: unknown;
  config: { websocket?: object };
};

type InFlight = { scope: WriteScope; answer(r: Response): void };

/** What `drain` did: requests answered 503, finished after the grace, given no answer; sockets closed. */
export type Drained = { cutShort: number; finishedLate: number; abandoned: number; socketsClosed: number };

/** The API's one listener: HTTP through `app.handle`, WebSocket upgrades, and graceful draining. */
export type Listener = {
  server: Server<unknown>;
  /** HTTP requests being answered right now. */
  readonly inFlight: number;
  /** Open WebSockets (hosted sign-in). */
  readonly sockets: number;
  /**
   * Stops accepting and drains (decision 0820): requests in flight get `graceMs` to finish; then one
   * that has sent no durable write is answered `cutShort()` (503) and can write nothing more, while one
   * that has is given another `graceMs` to finish with its own answer (if it still runs then, its
   * connection closes without an answer: the outcome is unknown, so no "retry it" is said). Open
   * WebSockets are then closed (1001) and their close handlers awaited, so hosted browsers end too.
   */
  drain(opts: { graceMs: number; cutShort: () => Response }): Promise<Drained>;
};

async function until(done: () => boolean, ms: number): Promise<void> {
  const t0 = performance.now();
  while (!done() && performance.now() - t0 < ms) await Bun.sleep(25);
}

/** How long closing WebSockets may take at shutdown (each closes its hosted browser). */
const SOCKETS_CLOSE_MS = 5000;

/**
 * Serves `app` on one `Bun.serve` that does both what graceful shutdown needs (every request counted
 * and run in a write scope) and WebSocket upgrades: Elysia's `.ws` routes upgrade through `app.server`,
 * which is set to this listener — with `reload` kept from it, since Elysia's `compile()` (run when a
 * lazily loaded plugin lands) would otherwise reload the listener with its own fetch and bypass the
 * count — and the socket events go to Elysia's own handlers, as `app.listen` would wire them.
 */
export function serveApp(
  app: ServedApp,
  opts: { hostname: string; port: number; refuse: () => Response },
): Listener {
  const inFlight = new Set<InFlight>();
  const upgraded = new WeakSet<Request>();
  const sockets = new Set<ServerWebSocket<unknown>>();
  const socketsClosing = new Set<Promise<unknown>>();
  let draining = false;
  const events = elysiaSockets as WebSocketHandler<unknown>;
  const server: Server<unknown> = Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // Long template clones lift the timeout per request (server.timeout); the rest keep an idle limit.
    idleTimeout: 120,
    // Signed local PUTs carry at most 10 MiB of image bytes.
    maxRequestBodySize: 12 * 1024 * 1024,
    websocket: {
      ...app.config.websocket,
      // The sign-in page sends small input events; nothing it sends comes near this.
      maxPayloadLength: 64 * 1024,
      open(ws) {
        sockets.add(ws as ServerWebSocket<unknown>);
        events.open?.(ws);
      },
      message: (ws, m) => events.message?.(ws, m),
      drain: (ws) => events.drain?.(ws),
      ping: (ws, d) => events.ping?.(ws, d),
      pong: (ws, d) => events.pong?.(ws, d),
      close(ws, code, reason) {
        sockets.delete(ws as ServerWebSocket<unknown>);
        // Elysia's handler, awaited here (the generic one drops its promise): it closes the hosted browser.
        const data = ws.data as { close?: (ws: unknown, code: number, reason: string) => unknown } | null;
        const closing = Promise.resolve(data?.close?.(ws, code, reason)).catch(() => {});
        socketsClosing.add(closing);
        void closing.finally(() => socketsClosing.delete(closing));
      },
    } satisfies WebSocketHandler<unknown>,
    fetch(request) {
      if (draining) return opts.refuse();
      const scope = new WriteScope();
      let answer!: (r: Response) => void;
      const cut = new Promise<Response>((resolve) => {
        answer = resolve;
      });
      const entry: InFlight = { scope, answer };
      inFlight.add(entry);
      const handled = runInWriteScope(scope, () => app.handle(request)).then((r) =>
        // Upgraded: Bun answers the handshake itself.
        upgraded.has(request) ? undefined : compressed(request, r),
      );
      return Promise.race([handled, cut]).finally(() => inFlight.delete(entry));
    },
  });
  app.server = new Proxy(server, {
    get(target, key) {
      if (key === "reload") return () => target;
      if (key === "upgrade")
        return (request: Request, options?: object) => {
          const ok = target.upgrade(request, options as never);
          if (ok) upgraded.add(request);
          return ok;
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });

  return {
    server,
    get inFlight() {
      return inFlight.size;
    },
    get sockets() {
      return sockets.size;
    },
    async drain({ graceMs, cutShort }) {
      draining = true;
      // Close the listener; open connections stay until their requests are answered.
      void server.stop(false);
      await until(() => inFlight.size === 0, graceMs);
      let cut = 0;
      const writing = new Set<InFlight>();
      for (const entry of [...inFlight]) {
        if (entry.scope.cancel()) {
          entry.answer(cutShort());
          cut++;
        } else writing.add(entry);
      }
      // A request whose write has begun is finished, not answered 503.
      await until(() => [...writing].every((e) => !inFlight.has(e)), graceMs);
      const abandoned = [...writing].filter((e) => inFlight.has(e)).length;
      const socketsClosed = sockets.size;
      for (const ws of [...sockets]) ws.close(1001, "The server is restarting; open the link again.");
      await until(() => sockets.size === 0 && socketsClosing.size === 0, SOCKETS_CLOSE_MS);
      // Let the 503s leave before the sockets close.
      if (cut > 0) await Bun.sleep(100);
      await server.stop(true);
      return { cutShort: cut, finishedLate: writing.size - abandoned, abandoned, socketsClosed };
    },
  };
}
