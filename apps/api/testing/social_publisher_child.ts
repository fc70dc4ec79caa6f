import { startSocialPublisher } from "@site/domain/social";
import { openRuntime } from "@site/runtime";
import { createPlatformAdapters } from "@site/social";

/**
 * A social publishing process for tests (configured by the environment: DATABASE_URL, SECRET_KEY,
 * SOCIAL_API_BASE_<PLATFORM>): the publisher alone, as every API process and the render daemon run it,
 * on the real clock. Prints "ready" once it takes jobs; tests SIGKILL it in the middle of a publication.
 */
const rt = await openRuntime({ migrate: false });
const publisher = startSocialPublisher(rt, createPlatformAdapters(rt));
console.log("ready");
process.on("SIGTERM", async () => {
  await publisher.stop({ graceMs: 1000 });
  await rt.close();
  process.exit(0);
});
