/** A counting SMTP sink in its own process for the newsletter bench: prints its URL, then its count every 200 ms. */
import { startSmtpSink } from "@site/domain/testing";

const sink = await startSmtpSink({ keep: false, parse: false });
console.log(sink.url);
setInterval(() => console.log(`count ${sink.count}`), 200);
