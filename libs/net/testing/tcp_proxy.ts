import type { Socket, TCPSocketListener } from "bun";

/**
 * What the proxy does with connections: forward them, refuse them (a server that was killed: open
 * connections are cut and the port is closed, so connecting is refused), or swallow them (a server that
 * hangs: connections are accepted and never answered).
 */
export type ProxyMode = "pass" | "refuse" | "blackhole";

type Side = { peer: Socket<Side> | null; pending: Uint8Array[]; client: boolean };

/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL, Redis, S3), for tests that take a
 * dependency away and give it back without touching the server other tests share.
 */
export function startTcpProxy(target: { host: string; port: number }): {
  host: string;
  port: number;
  /** Rewrites a URL of the target so that it goes through the proxy. */
  via(url: string): string;
  setMode(mode: ProxyMode): void;
  readonly connections: number;
  stop(): void;
} {
  let mode: ProxyMode = "pass";
  const open = new Set<Socket<Side>>();
  const listen = (port: number): TCPSocketListener<Side> =>
    Bun.listen<Side>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          client.data = { peer: null, pending: [], client: true };
          if (mode === "refuse") {
            client.end();
            return;
          }
          open.add(client);
          if (mode === "blackhole") return;
          Bun.connect<Side>({
            hostname: target.host,
            port: target.port,
            socket: {
              open(server) {
                server.data = { peer: client, pending: [], client: false };
                client.data.peer = server;
                open.add(server);
                for (const chunk of client.data.pending) server.write(chunk);
                client.data.pending = [];
              },
              data(server, chunk) {
                server.data.peer?.write(chunk);
              },
              close(server) {
                open.delete(server);
                server.data.peer?.end();
              },
              error(server) {
                server.data.peer?.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (mode === "blackhole") return;
          if (client.data.peer) client.data.peer.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          open.delete(client);
          client.data.peer?.end();
        },
        error(client) {
          client.data.peer?.end();
        },
      },
    });
  let listener: TCPSocketListener<Side> | null = listen(0);
  const port = listener.port;
  return {
    host: "127.0.0.1",
    port,
    via(url: string) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    setMode(m) {
      mode = m;
      if (m === "refuse") {
        for (const s of [...open]) s.terminate();
        listener?.stop(true);
        listener = null;
      } else listener ??= listen(port);
    },
    get connections() {
      return open.size;
    },
    stop() {
      for (const s of [...open]) s.terminate();
      listener?.stop(true);
      listener = null;
    },
  };
}
