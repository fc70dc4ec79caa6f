import { openRuntime } from "@site/runtime";
import { startApi } from "./server.ts";

/** `bun run apps/api`: the API alone, configured by the environment. */
const rt = await openRuntime();
const api = startApi(rt);
console.log(api.url);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, async () => {
    await api.stop();
    await rt.close();
    process.exit(0);
  });
}
