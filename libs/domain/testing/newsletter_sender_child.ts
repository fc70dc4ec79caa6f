import { startNewsletterSender } from "@site/domain/newsletters";
import { openRuntime } from "@site/runtime";

/**
 * A newsletter sending process for tests (configured by the environment: DATABASE_URL, SMTP_URL,
 * NEWSLETTER_*): the sender alone, as the render daemon runs it. Prints "ready" once it takes jobs;
 * tests SIGKILL it in the middle of a send and start it again.
 */
const rt = await openRuntime({ migrate: false });
const sender = await startNewsletterSender(rt);
console.log("ready");
process.on("SIGTERM", async () => {
  await sender.stop({ graceMs: 1000 });
  await rt.close();
  process.exit(0);
});
