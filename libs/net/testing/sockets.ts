import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/** A loopback TCP server: the connections it accepted, those closed since, and every byte it received. */
export type TcpServer = {
  port: number;
  accepted(): number;
  closed(): number;
  received(): string;
  close(): Promise<void>;
};

/** A TCP server on 127.0.0.1 that counts its connections; `onSocket` decides what it does with each. */
export async function tcpServer(onSocket: (s: Socket) => void): Promise<TcpServer> {
  let accepted = 0;
  let closed = 0;
  let received = "";
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("data", (d: Buffer) => {
      received += d.toString("latin1");
    });
    s.on("close", () => {
      closed++;
      sockets.delete(s);
    });
    s.on("error", () => {});
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    closed: () => closed,
    received: () => received,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port on 127.0.0.1 where nothing listens (a server was opened there and closed again). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A raw client on 127.0.0.1: what it received so far, a wait on a condition with a deadline, and its close. */
export function rawClient(port: number, opts: { allowHalfOpen?: boolean } = {}) {
  const sock = connect({ port, host: "127.0.0.1", allowHalfOpen: opts.allowHalfOpen ?? false });
  let received = Buffer.alloc(0);
  let ended = false;
  let checks: (() => void)[] = [];
  const closed = new Promise<void>((r) => sock.once("close", () => r()));
  sock.on("error", () => {});
  sock.on("data", (d: Buffer) => {
    received = Buffer.concat([received, d]);
    for (const c of checks) c();
  });
  sock.once("end", () => {
    ended = true;
    for (const c of checks) c();
  });
  sock.once("close", () => {
    for (const c of checks) c();
  });
  return {
    sock,
    closed,
    text: () => received.toString("latin1"),
    bytes: () => received,
    /** Waits until `pred` holds for the text received, or the peer ended or closed the connection. */
    until(pred: (text: string) => boolean, ms = 3_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out; got ${JSON.stringify(received.toString("latin1"))}`)),
          ms,
        );
        const check = () => {
          if (pred(received.toString("latin1")) || ended || sock.destroyed) {
            clearTimeout(timer);
            checks = checks.filter((c) => c !== check);
            resolve(received.toString("latin1"));
          }
        };
        checks.push(check);
        check();
      });
    },
  };
}

/** True when the client's connection closed within `ms`. */
export const closedWithin = (c: { closed: Promise<void> }, ms: number) =>
  Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

/** Waits until `cond` holds (polled every 10 ms); false when it still does not after `ms`. */
export async function eventually(cond: () => boolean, ms = 2_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}
