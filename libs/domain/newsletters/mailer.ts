import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { Config, Logger } from "@site/config";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import { classifyReply, type ReplyClass } from "./reply_classes.ts";

/** One composed message and its envelope. */
export type OutgoingMail = { id: string; from: string; to: string; raw: Buffer };

/**
 * `beforeCommit` runs while the message's bytes go out, before the end-of-data mark that makes the
 * server deliver it (SMTP: the final "." of DATA; outbox: the file's rename). It prepares the sender's
 * own record and may return a synchronous `commit`, called immediately before the mark is released,
 * in the same turn of the event loop. Throwing from it withdraws the message: the server sees the
 * connection drop mid-DATA and delivers nothing (RFC 5321 §3.8,
 * https://www.rfc-editor.org/rfc/rfc5321#section-3.8). Decision 1102.
 */
export type SendOptions = { beforeCommit?: () => Promise<(() => void) | undefined> };

/** Where mail goes: an SMTP server (SMTP_URL) or files in DATA_DIR/outbox/. */
export type Mailer = {
  readonly kind: "smtp" | "outbox";
  /** For logs: the server's host and port, or the outbox folder. */
  readonly describe: string;
  send(mail: OutgoingMail, opts?: SendOptions): Promise<{ response: string }>;
  /** Whether the server answers now (a connection, its greeting and EHLO, then QUIT); the outbox always does. */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
};

/**
 * What a failed send was about (CONTRACT "Delivery as real mail servers expect it", decisions 1110, 1451):
 * - `recipient`: the server refused this one recipient's address for good (a 5xx answer to its RCPT
 *   TO whose RFC 3463 status is 5.1.x or 5.2.1, or a bare 5xx): only this recipient bounces;
 * - `transient`: a 4xx anywhere, a refused, dropped or timed-out connection: tried again later;
 * - `relay`: a permanent failure that is not about the recipient (AUTH refused, MAIL FROM refused,
 *   a policy refusal at RCPT TO, the message refused after DATA, TLS failure): nobody bounces, the
 *   campaign pauses.
 */
export type MailFailureKind = "recipient" | "transient" | "relay";

/** A send that failed: its kind, the server's reply code, and `committed` when beforeCommit had run. */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly kind: MailFailureKind,
    readonly responseCode: number | null,
    readonly committed: boolean,
    opts?: { cause?: unknown; command?: string | null; reply?: ReplyClass | null },
  ) {
    super(message, opts);
    this.name = "MailSendError";
    this.command = opts?.command ?? null;
    this.reply = opts?.reply ?? null;
  }
  /** The server's reply as RFC 3463 classifies it (reply_classes.ts), when it gave one. */
  readonly reply: ReplyClass | null;
  /** The SMTP command the server answered (`RCPT TO`, `MAIL FROM`, `AUTH PLAIN`, `DATA`), when known. */
  readonly command: string | null;
  /** True when only this recipient is refused for good (it bounces). */
  get permanent(): boolean {
    return this.kind === "recipient";
  }
}

/** The SMTP mailer when SMTP_URL is set, else the outbox of .eml files. */
export function openMailer(config: Config, log: Logger, opts: { connections?: number } = {}): Mailer {
  const url = config.newsletter.smtpUrl;
  if (!url) return createOutboxMailer(join(config.dataDir, "outbox"));
  return createSmtpMailer(url, {
    connections: opts.connections ?? config.newsletter.concurrency,
    log,
    heloName: config.newsletter.heloName,
    timeoutMs: config.newsletter.smtpTimeoutMs,
  });
}

/** Writes each message as `<id>.eml` under `dir` (the embedded default: open them with any mail client). */
export function createOutboxMailer(dir: string): Mailer {
  return {
    kind: "outbox",
    describe: dir,
    async send(mail, opts = {}) {
      mkdirSync(dir, { recursive: true });
      const name = `${mail.id.replace(/[^\w.-]/g, "_")}.eml`;
      const tmp = join(dir, `.${name}.${process.pid}.tmp`);
      writeFileSync(tmp, mail.raw);
      try {
        const commit = await opts.beforeCommit?.();
        commit?.();
      } catch (err) {
        rmSync(tmp, { force: true });
        throw err;
      }
      renameSync(tmp, join(dir, name));
      return { response: `written to ${join(dir, name)}` };
    },
    async reachable() {
      return true;
    },
    async close() {},
  };
}

type Conn = { smtp: SMTPConnection; broken: boolean };

/**
 * Sends through SMTP with nodemailer's SMTPConnection, up to `connections` kept open and reused; a
 * connection that failed is closed, never reused. STARTTLS is used when the server offers it;
 * smtps:// is TLS from the first byte. EHLO gives `heloName` (SMTP_HELO_NAME; the loopback address
 * literal when not given: never `localhost`, which relays such as Google's answer 421).
 */
export function createSmtpMailer(
  smtpUrl: string,
  opts: { connections: number; log: Logger; heloName?: string; timeoutMs?: number },
): Mailer {
  const url = new URL(smtpUrl);
  const secure = url.protocol === "smtps:";
  const port = Number(url.port) || (secure ? 465 : 587);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const auth = url.username
    ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
    : null;
  const idle: Conn[] = [];
  const waiting: ((c: Conn | null) => void)[] = [];
  let open = 0;
  let closed = false;

  const timeoutMs = opts.timeoutMs ?? 30_000;
  const connect = (): Promise<Conn> =>
    new Promise((resolve, reject) => {
      // Every step has a deadline (SMTP_TIMEOUT_MS): connecting, the greeting, and each reply
      // (nodemailer's socketTimeout is the socket's idle time, reset by every byte the server sends).
      // RFC 5321 §4.5.3.2 asks clients for minutes per step; a relay that is gone must not hold a
      // connection slot that long, so the delivery is tried again instead (decision 1450).
      const smtp = new SMTPConnection({
        host,
        port,
        secure,
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        name: opts.heloName ?? "[127.0.0.1]",
      });
      const conn: Conn = { smtp, broken: false };
      let settled = false;
      const fail = (err: unknown) => {
        conn.broken = true;
        if (settled) return;
        settled = true;
        smtp.close();
        reject(err instanceof Error ? err : new Error("the SMTP connection closed before it was ready"));
      };
      // nodemailer reports a refused or reset connection as an 'error' event, never to connect()'s
      // callback: without these a send to a port where nothing listens would wait for ever.
      smtp.on("error", fail);
      smtp.on("end", () => fail(new Error("the SMTP server closed the connection before it was ready")));
      smtp.connect((err) => {
        if (err) return fail(err);
        if (!auth) {
          settled = true;
          return resolve(conn);
        }
        smtp.login(auth, (loginErr) => {
          if (loginErr) return fail(loginErr);
          settled = true;
          resolve(conn);
        });
      });
    });

  const acquire = async (): Promise<Conn> => {
    for (;;) {
      const conn = idle.pop();
      if (!conn) break;
      if (!conn.broken) return conn;
      open--;
    }
    if (open < opts.connections) {
      open++;
      try {
        return await connect();
      } catch (err) {
        open--;
        throw err;
      }
    }
    const next = await new Promise<Conn | null>((r) => waiting.push(r));
    if (next) return next;
    if (closed) throw new Error("mailer closed");
    // A slot was freed by a connection that broke: open a fresh one.
    return acquire();
  };
  const release = (conn: Conn) => {
    if (conn.broken || closed) {
      open--;
      conn.smtp.close();
      // Someone waiting opens a fresh connection in the slot this one freed.
      waiting.shift()?.(null);
      return;
    }
    const w = waiting.shift();
    if (w) w(conn);
    else idle.push(conn);
  };

  return {
    kind: "smtp",
    describe: `${host}:${port}${secure ? " (TLS)" : ""}`,
    async send(mail, sendOpts = {}) {
      let conn: Conn;
      try {
        conn = await acquire();
      } catch (err) {
        throw classify(err, false);
      }
      let committed = false;
      let failed = false;
      // The message, then (only after beforeCommit) its end: nodemailer writes "." when this stream ends.
      let pushed = false;
      const body = new Readable({
        read() {
          if (pushed) return;
          pushed = true;
          // The record is prepared while the bytes travel; the mark waits for it.
          this.push(mail.raw);
          const prepare = sendOpts.beforeCommit ?? (async () => undefined);
          prepare().then(
            (commit) => {
              // The send already failed (the connection dropped mid-DATA): nothing to commit.
              if (failed) return;
              commit?.();
              committed = true;
              this.push(null);
            },
            (err) => this.destroy(err instanceof Error ? err : new Error(String(err))),
          );
        },
      });
      try {
        const info = await new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) => {
          conn.smtp.send({ from: mail.from, to: [mail.to] }, body, (err, res) =>
            err ? reject(err) : resolve(res),
          );
        });
        release(conn);
        return { response: info.response };
      } catch (err) {
        failed = true;
        const e = err as SMTPConnection.SMTPError;
        // A refused envelope leaves the session usable after RSET; anything else ends the connection.
        if (e.code === "EENVELOPE" && !conn.broken) {
          await new Promise<void>((r) => {
            // A connection that ends during RSET never calls back: its 'end' settles it instead.
            const gone = () => {
              conn.broken = true;
              r();
            };
            conn.smtp.once("end", gone);
            conn.smtp.reset((resetErr) => {
              conn.smtp.off("end", gone);
              if (resetErr) conn.broken = true;
              r();
            });
          });
        } else conn.broken = true;
        release(conn);
        throw classify(err, committed);
      }
    },
    async reachable() {
      try {
        const conn = await connect();
        conn.smtp.quit();
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      closed = true;
      for (const w of waiting.splice(0)) w(null);
      for (const conn of idle.splice(0)) {
        conn.smtp.quit();
        open--;
      }
    },
  };
}

/** Sorts a nodemailer error into recipient / transient / relay (see MailFailureKind). */
export function classify(err: unknown, committed: boolean): MailSendError {
  const e = err as {
    responseCode?: number;
    response?: string;
    message?: string;
    code?: string;
    originalCode?: string;
    command?: string;
  };
  const code = typeof e.responseCode === "number" ? e.responseCode : null;
  const command = typeof e.command === "string" ? e.command : null;
  const text = e.response || e.message || String(err);
  let kind: MailFailureKind;
  const reply = code !== null ? classifyReply({ code, text }) : null;
  // At RCPT TO only a bad address (5.1.x, 5.2.1, or a bare 550) is the recipient's; a policy refusal
  // (5.7.x "Relay access denied", a blocklist, 5.3.x, 5.4.x) is about us: the campaign pauses; a full
  // mailbox (5.2.2) is tried again like a 4xx (decision 1451).
  if (code !== null && code >= 500 && command === "RCPT TO")
    kind = reply?.kind === "hard" ? "recipient" : reply?.kind === "soft" ? "transient" : "relay";
  else if (code !== null && code >= 500) kind = "relay";
  else if (code !== null && code >= 400) kind = "transient";
  // No reply code: the connection (refused, reset, timed out) is transient; a TLS handshake or a
  // refused login without a code (no credentials the server takes) is the relay's configuration.
  else
    kind =
      e.code === "ETLS" || e.code === "EAUTH" || /CERT|SELF_SIGNED|SSL|TLS/.test(String(e.originalCode ?? ""))
        ? "relay"
        : "transient";
  return new MailSendError(text, kind, code, committed, { cause: err, command, reply });
}
