import { startSmtpSink } from "./smtp_sink.ts";

/**
 * A mail relay in its own process for tests that kill it (SIGKILL) and start it again on the same
 * port: the smtp-server sink on 127.0.0.1:$PORT (any free port when unset). Prints `ready <port>`, then
 * `got <recipient>` for each message it accepted (a 250 after the end of DATA). With HOLD_AFTER=n, once
 * n messages were accepted every RCPT TO waits for ever and `holding` is printed: a kill then finds
 * each client inside its envelope, before any message's data (nothing half delivered).
 */
const sink = await startSmtpSink({ parse: false, keep: true, port: Number(process.env.PORT || 0) });
const holdAfter = Number(process.env.HOLD_AFTER || 0);
sink.onMessage = (n) => {
  const last = sink.messages.pop();
  for (const to of last?.to ?? []) process.stdout.write(`got ${to}\n`);
  if (holdAfter > 0 && n >= holdAfter && !sink.holdRcpt) {
    sink.holdRcpt = () => new Promise<void>(() => {});
    process.stdout.write("holding\n");
  }
};
process.stdout.write(`ready ${sink.port}\n`);
