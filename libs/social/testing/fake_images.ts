import { sampleImage } from "@site/domain/testing";

/**
 * A local server speaking the OpenAI images API (`POST /v1/images/generations`,
 * https://platform.openai.com/docs/api-reference/images/create), strict where OpenAI is: a bearer API key
 * (401 `invalid_api_key`), a JSON body with `model` and a non-empty `prompt` (400
 * `invalid_request_error`), `n` from 1 to 10 and a `size` the model takes; it answers
 * `{created, data: [{b64_json}]}` (gpt-image-1 returns base64 always). `fail(n)` makes the next n
 * requests fail (500), `garbage(n)` answer bytes that are not an image.
 */
export function startFakeImageApi(opts: { apiKey?: string; delayMs?: number } = {}) {
  const apiKey = opts.apiKey ?? "sk-test-images";
  let failures = 0;
  let garbage = 0;
  let served = 0;
  const requests: { model: string; prompt: string; n: number; size: string }[] = [];
  const SIZES: Record<string, string[]> = {
    "gpt-image-1": ["1024x1024", "1536x1024", "1024x1536", "auto"],
    "dall-e-3": ["1024x1024", "1792x1024", "1024x1792"],
    "dall-e-2": ["256x256", "512x512", "1024x1024"],
  };
  const error = (status: number, message: string, type: string, code: string | null = null) =>
    Response.json({ error: { message, type, param: null, code } }, { status });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/images/generations")
        return error(404, "Invalid URL", "invalid_request_error");
      if (req.headers.get("authorization") !== `Bearer ${apiKey}`)
        return error(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key");
      const b = (await req.json().catch(() => null)) as Record<string, unknown> | null;
      if (!b) return error(400, "We could not parse the JSON body of your request.", "invalid_request_error");
      const model = String(b.model ?? "");
      if (!SIZES[model])
        return error(400, `Invalid model ${model}`, "invalid_request_error", "invalid_value");
      if (typeof b.prompt !== "string" || !b.prompt.trim())
        return error(400, "prompt is required", "invalid_request_error", "invalid_value");
      const n = b.n === undefined ? 1 : Number(b.n);
      if (!Number.isInteger(n) || n < 1 || n > 10)
        return error(400, "n must be between 1 and 10", "invalid_request_error");
      const size = String(b.size ?? "1024x1024");
      if (!SIZES[model]!.includes(size))
        return error(400, `Invalid size ${size} for ${model}`, "invalid_request_error", "invalid_value");
      requests.push({ model, prompt: b.prompt, n, size });
      if (opts.delayMs) await Bun.sleep(opts.delayMs);
      if (failures > 0) {
        failures--;
        return error(500, "The server had an error while processing your request.", "server_error");
      }
      const bad = garbage > 0;
      if (bad) garbage--;
      served += n;
      const data = Array.from({ length: n }, (_, i) => ({
        b64_json: Buffer.from(
          bad
            ? new TextEncoder().encode("<html>not an image</html>")
            : sampleImage("png", { width: 64, height: 64, size: 512 + i }),
        ).toString("base64"),
      }));
      return Response.json({ created: Math.floor(Date.now() / 1000), data });
    },
  });
  return {
    /** IMAGE_API_BASE, IMAGE_API_KEY and IMAGE_MODEL for this server. */
    env: {
      IMAGE_API_BASE: `http://127.0.0.1:${server.port}/v1`,
      IMAGE_API_KEY: apiKey,
      IMAGE_MODEL: "gpt-image-1",
    },
    requests,
    served: () => served,
    fail: (n: number) => {
      failures = n;
    },
    garbage: (n: number) => {
      garbage = n;
    },
    close: () => server.stop(true),
  };
}
