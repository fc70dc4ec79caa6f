// The child process of jpeg_convert.ts: reads an image on stdin, writes its width and height (two
// big-endian uint32) then the JPEG on stdout. It runs under an RLIMIT_DATA set by its parent, so a
// decode that needs more memory fails here, never in the API process.
import { createCanvas, loadImage } from "@napi-rs/canvas";

const input = Buffer.from(await new Response(Bun.stdin.stream()).arrayBuffer());
try {
  const img = await loadImage(input);
  const { width, height } = img;
  const canvas = createCanvas(width, height);
  const g = canvas.getContext("2d");
  g.fillStyle = "#ffffff";
  g.fillRect(0, 0, width, height);
  // A surface Skia could not allocate (the memory limit) draws nothing and reads back transparent.
  if (g.getImageData(0, 0, 1, 1).data[3] !== 255) throw new Error("no memory for the canvas");
  g.drawImage(img, 0, 0);
  const jpeg = await canvas.encode("jpeg", 90);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(width, 0);
  head.writeUInt32BE(height, 4);
  await Bun.write(Bun.stdout, Buffer.concat([head, jpeg]));
  process.exit(0);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
