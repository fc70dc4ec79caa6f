/** Signed uploads whose bodies arrive slowly, so that some are half-written when something dies. */
import { sampleImage } from "@site/domain/testing";
import type { Recorder, Target } from "../load.ts";

/** How many uploads, how big, in how many pieces, and how long between pieces. */
export type Trickle = { n: number; bytes: number; chunks: number; everyMs: number };

/** `n` signed uploads whose PUT bodies trickle (`chunks` pieces every `everyMs`) through the API. */
export async function startTrickles(r: Recorder, t: Target, opts: Trickle): Promise<Promise<unknown>[]> {
  const big = sampleImage("png", { width: 50, height: 50, size: opts.bytes });
  const out: Promise<unknown>[] = [];
  for (let i = 0; i < opts.n; i++) {
    const prep = await r.call("upload", `${t.api}/api/v1/sites/${t.siteId}/media/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ contentType: "image/png", size: big.byteLength }),
    });
    if (prep?.res.status !== 201) continue;
    const size = Math.ceil(big.byteLength / opts.chunks);
    let k = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (k * size >= big.byteLength) return c.close();
        if (k > 0) await Bun.sleep(opts.everyMs);
        c.enqueue(big.subarray(k * size, (k + 1) * size));
        k++;
      },
    });
    out.push(
      r.call("put", prep.json.upload.url, {
        method: "PUT",
        headers: { ...prep.json.upload.headers, "content-length": String(big.byteLength) },
        body,
        duplex: "half",
      } as RequestInit),
    );
  }
  return out;
}
