/** An HTTPS image server in its own process for the media benchmark: argv cert, key, size; prints its port. */
import { sampleImage } from "@site/domain/testing";

const [cert, key, size] = process.argv.slice(2);
const big = sampleImage("png", { width: 4000, height: 3000, size: Number(size) });
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: Bun.file(cert!), key: Bun.file(key!) },
  fetch: () => new Response(big, { headers: { "content-type": "image/png" } }),
});
console.log(server.port);
