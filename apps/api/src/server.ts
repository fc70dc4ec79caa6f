import type { Runtime } from "@site/runtime";
import { createApp } from "./app.ts";

/** Starts the API on the configured host and port; returns its URL and a function that stops it. */
export function startApi(rt: Runtime): { url: string; stop(): Promise<void> } {
  const app = createApp(rt);
  app.listen({
    hostname: rt.config.host,
    port: rt.config.port,
    // Long template clones lift the timeout per request (server.timeout); the rest keep an idle limit.
    idleTimeout: 120,
    // Signed local PUTs carry at most 10 MiB of image bytes.
    maxRequestBodySize: 12 * 1024 * 1024,
  });
  const port = app.server?.port;
  const url = `http://${rt.config.host.includes(":") ? `[${rt.config.host}]` : rt.config.host}:${port}`;
  rt.log.info("api listening", { url, publicBaseUrl: rt.config.publicBaseUrl });
  return {
    url,
    stop: async () => {
      await app.stop(true);
    },
  };
}
