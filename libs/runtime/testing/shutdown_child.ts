import { createLogger } from "@site/config";
import { processShutdown } from "../src/shutdown.ts";

// A process stopped by processShutdown (shutdown_test.ts): each step prints a line on stdout, so the
// test sees their order and that a second signal runs nothing again.
const log = createLogger("info");
const shutdown = processShutdown({ log, close: async () => console.log("runtime closed") }, "test child");
console.log(`stopping before a signal: ${shutdown.stopping}`);
shutdown.stopWith(async () => {
  console.log(`app stop, stopping: ${shutdown.stopping}`);
  await Bun.sleep(300);
  console.log("app stopped");
});
console.log("ready");
setInterval(() => {}, 1000);
