import { Webhook } from "standardwebhooks";

/** One request a test receiver got. */
export type ReceivedHook = {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  /** The parsed body: {type, timestamp, data}. */
  json: { type: string; timestamp: string; data: unknown };
};

/** How a path answers: a Response, or a function of the try number for that webhook-id (from 1). */
type Answer = (req: Request, tryOfId: number) => Response | Promise<Response>;

/**
 * A webhook receiver on 127.0.0.1 (a port of its own; list `host` in FETCH_ALLOW_HOSTS). Records every
 * request; paths answer 200 unless `on(path, answer)` says otherwise.
 */
export function startWebhookReceiver(opts: { port?: number } = {}) {
  const got: ReceivedHook[] = [];
  const answers = new Map<string, Answer>();
  const hanging = new Set<() => void>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      const headers = Object.fromEntries(req.headers.entries());
      const hook: ReceivedHook = {
        path: url.pathname,
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
        headers,
        body,
        json: body ? JSON.parse(body) : null,
      };
      got.push(hook);
      const answer = answers.get(url.pathname);
      if (!answer) return new Response("ok");
      return answer(req, got.filter((g) => g.id === hook.id).length);
    },
  });
  const host = `127.0.0.1:${server.port}`;
  return {
    host,
    port: server.port as number,
    got,
    url: (path: string) => `http://${host}${path}`,
    on(path: string, answer: Answer) {
      answers.set(path, answer);
    },
    /** An answer that never comes (until the receiver stops). */
    hang: (): Promise<Response> =>
      new Promise<Response>((resolve) => {
        hanging.add(() => resolve(new Response("late")));
      }),
    /** Requests to `path` so far. */
    to: (path: string) => got.filter((g) => g.path === path),
    /** Waits until `n` requests reached `path` (deadline `ms`). */
    async waitFor(path: string, n = 1, ms = 15_000): Promise<ReceivedHook[]> {
      const deadline = Date.now() + ms;
      for (;;) {
        const seen = got.filter((g) => g.path === path);
        if (seen.length >= n) return seen;
        if (Date.now() > deadline)
          throw new Error(`${path}: ${seen.length} of ${n} webhook requests before the deadline`);
        await Bun.sleep(20);
      }
    },
    stop() {
      for (const release of hanging) release();
      server.stop(true);
    },
  };
}

/** The receiver type. */
export type WebhookReceiver = ReturnType<typeof startWebhookReceiver>;

/** Verifies a received request with the standardwebhooks library; returns the payload or throws. */
export function verifyHook(secret: string, hook: ReceivedHook): unknown {
  return new Webhook(secret).verify(hook.body, {
    "webhook-id": hook.id,
    "webhook-timestamp": hook.timestamp,
    "webhook-signature": hook.signature,
  });
}
