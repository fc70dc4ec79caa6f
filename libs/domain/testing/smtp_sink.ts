import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** One message the sink accepted (a 250 after the end of DATA), with its envelope. */
export type ReceivedMail = { from: string; to: string[]; raw: Buffer; parsed: ParsedMail | null };

/** A real SMTP server (the smtp-server package) on 127.0.0.1, keeping what it accepted. */
export type SmtpSink = {
  /** smtp://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Messages accepted so far, in order. */
  messages: ReceivedMail[];
  /** Count of messages accepted (also when `parse` is off and nothing is kept). */
  readonly count: number;
  /** Resolves once `n` messages were accepted; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  /** Called after each accepted message (a test may act in the middle of a send). */
  onMessage?: (count: number) => void;
  /** The names clients gave in EHLO/HELO, one per session that sent MAIL FROM or AUTH. */
  helos: string[];
  /** While set, every AUTH is answered with this reply (a 535 by default: the relay refuses the login). */
  refuseAuth: string | null;
  /** While set, every MAIL FROM is answered with this 5xx reply (the relay refuses the sender). */
  refuseMailFrom: string | null;
  /** While set, every RCPT TO is answered with this reply (a relay refusing to relay: "554 5.7.1 … Relay access denied"). */
  refuseRcpt: string | null;
  /** Replies to RCPT TO for given addresses (lowercase), e.g. "552 5.2.2 mailbox full". */
  rcptReplies: Map<string, string>;
  /**
   * While set, every end of DATA is answered with this reply instead of the 250 (the relay refuses the
   * message itself, e.g. a DMARC rejection): nothing is accepted.
   */
  refuseData: string | null;
  /**
   * While true, a connection is cut as soon as its message's data starts to arrive, before the
   * end-of-data mark (a connection lost mid-DATA: nothing is delivered, RFC 5321 §3.8).
   */
  dropInData: boolean;
  /**
   * While set, the answer to each RCPT TO waits for the promise this returns (a test holds a
   * delivery on the server, its envelope given, its message not yet sent).
   */
  holdRcpt: ((address: string) => Promise<void> | void) | null;
  /**
   * While set, the answer to the end of DATA (the 250 that accepts the message) waits for the promise
   * this returns; the message counts as accepted only once answered.
   */
  holdData: ((mail: ReceivedMail) => Promise<void> | void) | null;
  close(): Promise<void>;
};

/**
 * Starts the sink. `reject` answers RCPT TO for an address with a permanent 550 ("mailbox
 * unavailable", RFC 5321 §4.2.2/§4.2.3, https://www.rfc-editor.org/rfc/rfc5321#section-4.2.3);
 * `defer` answers 451 (local error, try again later) for an address the given number of times. A
 * message whose connection closes before the end-of-data mark is never delivered (RFC 5321 §3.8;
 * smtp-server destroys its stream, and the sink keeps nothing). `keep: false` only counts (benchmarks).
 */
export async function startSmtpSink(
  opts: {
    reject?: string[];
    defer?: Record<string, number>;
    keep?: boolean;
    parse?: boolean;
    /** Offers AUTH (PLAIN, LOGIN) without TLS and takes exactly these credentials. */
    auth?: { user: string; pass: string };
    /** The port to listen on (a relay started again where it was); 0 or none: any free port. */
    port?: number;
  } = {},
): Promise<SmtpSink> {
  const reject = new Set((opts.reject ?? []).map((a) => a.toLowerCase()));
  const defer = new Map(Object.entries(opts.defer ?? {}).map(([a, n]) => [a.toLowerCase(), n]));
  const keep = opts.keep ?? true;
  const parse = opts.parse ?? true;
  let count = 0;
  const waiters = new Set<{ n: number; resolve: () => void }>();
  const sink: SmtpSink = {
    url: "",
    port: 0,
    messages: [],
    helos: [],
    refuseAuth: null,
    refuseMailFrom: null,
    refuseRcpt: null,
    rcptReplies: new Map(),
    refuseData: null,
    dropInData: false,
    holdRcpt: null,
    holdData: null,
    get count() {
      return count;
    },
    waitFor(n, timeoutMs = 60_000) {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`the SMTP sink got ${count} messages, waited for ${n}`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: opts.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    size: 10 * 1024 * 1024,
    onAuth(auth, session, callback) {
      sink.helos.push(session.hostNameAppearsAs);
      const fail = (reply: string) =>
        callback(
          Object.assign(new Error(reply.replace(/^\d{3}\s*/, "")), {
            responseCode: Number(reply.slice(0, 3)) || 535,
          }),
        );
      if (sink.refuseAuth !== null) return fail(sink.refuseAuth);
      if (auth.username !== opts.auth?.user || auth.password !== opts.auth?.pass)
        return fail("535 5.7.8 Authentication credentials invalid");
      callback(null, { user: auth.username });
    },
    onMailFrom(_address, session, callback) {
      if (!session.user) sink.helos.push(session.hostNameAppearsAs);
      if (sink.refuseMailFrom !== null)
        return callback(
          Object.assign(new Error(sink.refuseMailFrom.replace(/^\d{3}\s*/, "")), {
            responseCode: Number(sink.refuseMailFrom.slice(0, 3)) || 550,
          }),
        );
      callback();
    },
    async onRcptTo(address, _session, callback) {
      const addr = address.address.toLowerCase();
      await sink.holdRcpt?.(addr);
      const reply = sink.refuseRcpt ?? sink.rcptReplies.get(addr);
      if (reply)
        return callback(
          Object.assign(new Error(reply.replace(/^\d{3}\s*/, "")), {
            responseCode: Number(reply.slice(0, 3)) || 550,
          }),
        );
      if (reject.has(addr))
        return callback(Object.assign(new Error("5.1.1 mailbox unavailable"), { responseCode: 550 }));
      const left = defer.get(addr) ?? 0;
      if (left > 0) {
        defer.set(addr, left - 1);
        return callback(Object.assign(new Error("4.3.0 try again later"), { responseCode: 451 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      if (sink.dropInData)
        stream.once("data", () => {
          // smtp-server keeps its connections (each with its session and socket) in `connections`.
          const open = (
            server as unknown as { connections: Set<{ session: unknown; _socket: { destroy(): void } }> }
          ).connections;
          for (const c of open) if (c.session === session) c._socket.destroy();
        });
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", () => {}); // a connection closed mid-DATA: nothing delivered
      stream.on("end", async () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded)
          return callback(Object.assign(new Error("message too big"), { responseCode: 552 }));
        const raw = Buffer.concat(chunks);
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw,
          parsed: parse ? await simpleParser(raw) : null,
        };
        await sink.holdData?.(mail);
        if (sink.refuseData !== null)
          return callback(
            Object.assign(new Error(sink.refuseData.replace(/^\d{3}\s*/, "")), {
              responseCode: Number(sink.refuseData.slice(0, 3)) || 554,
            }),
          );
        count++;
        if (keep) sink.messages.push(mail);
        callback();
        sink.onMessage?.(count);
        for (const w of [...waiters])
          if (count >= w.n) {
            waiters.delete(w);
            w.resolve();
          }
      });
    },
  });
  // A client killed mid-session resets its connection (ECONNRESET): that is the client's business.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  sink.port = port;
  sink.url = `smtp://127.0.0.1:${port}`;
  return sink;
}
