import { Elysia } from "elysia";
import { AppError, type Context, finishLogin, findBrowser, openLoginLink } from "@site/domain";
import { type HostedBrowser, openHostedBrowser, parseInputEvent } from "./hosted_browser.ts";
import { interactivePage, manualPage, refusedPage } from "./pages.ts";

/** The most hosted sign-in browsers one process runs at once. */
const MAX_SESSIONS = 4;
/** A hosted browser closes after this long even if the page stays open. */
const MAX_SESSION_MS = 15 * 60_000;

function htmlResponse(body: string, status = 200): Response {
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    },
  });
}

type Live = {
  token: string;
  ready: Promise<HostedBrowser | null>;
  /** Input and Done run one after another, in the order the page sent them. */
  chain: Promise<unknown>;
  timer?: ReturnType<typeof setTimeout>;
};

/**
 * The hosted sign-in page behind a login link: GET shows it (a live screencast of a hosted Chromium,
 * or, without a browser, how to give credentials by hand); its WebSocket streams frames and forwards
 * mouse and keyboard; Done stores the browser's session encrypted. Expired or used links are refused.
 */
export function loginPageRoutes(ctx: Context) {
  const live = new Map<string, Live>();
  const byToken = new Set<string>();
  const end = async (id: string) => {
    const s = live.get(id);
    if (!s) return;
    live.delete(id);
    byToken.delete(s.token);
    clearTimeout(s.timer);
    const browser = await s.ready;
    await browser?.close().catch(() => {});
  };
  return new Elysia()
    .get(
      "/screenshot-login/:token",
      async ({ params }) => {
        let link: Awaited<ReturnType<typeof openLoginLink>>;
        try {
          link = await openLoginLink(ctx, params.token);
        } catch (err) {
          if (err instanceof AppError) return htmlResponse(refusedPage(), 410);
          throw err;
        }
        if (!link.interactive || !findBrowser(ctx.config.chromiumPath))
          return htmlResponse(manualPage(link.sourceUrl));
        return htmlResponse(interactivePage(link.sourceUrl));
      },
      { detail: { hide: true } },
    )
    .ws("/screenshot-login/:token/ws", {
      async open(ws) {
        const token = (ws.data.params as { token: string }).token;
        const fail = (message: string) => {
          ws.send(JSON.stringify({ t: "error", message }));
          ws.close();
        };
        let link: Awaited<ReturnType<typeof openLoginLink>>;
        try {
          link = await openLoginLink(ctx, token);
        } catch {
          return fail("This sign-in link expired or was already used.");
        }
        if (!link.interactive) return fail("No hosted browser on this server.");
        if (byToken.has(token)) return fail("This sign-in link is already open in another tab.");
        if (live.size >= MAX_SESSIONS) return fail("All hosted browsers are busy; try again in a minute.");
        byToken.add(token);
        const ready = openHostedBrowser({ config: ctx.config, log: ctx.log, url: link.sourceUrl }).catch(
          (err) => {
            ctx.log.warn("hosted browser failed to start", { cause: String(err) });
            fail("The hosted browser could not start.");
            return null;
          },
        );
        const s: Live = { token, ready, chain: Promise.resolve() };
        live.set(ws.id, s);
        const ttl = Math.min(MAX_SESSION_MS, link.expiresAt.getTime() - ctx.clock.now().getTime());
        s.timer = setTimeout(
          () => {
            ws.close();
            void end(ws.id);
          },
          Math.max(0, ttl),
        );
        const browser = await ready;
        await browser?.startScreencast((data) => ws.send(JSON.stringify({ t: "frame", data })));
      },
      message(ws, raw) {
        const s = live.get(ws.id);
        if (!s) return;
        s.chain = s.chain.then(() => handleMessage(ws, s, raw)).catch(() => {});
      },
      async close(ws) {
        await end(ws.id);
      },
    });

  async function handleMessage(
    ws: { id: string; send(m: string): unknown; close(): unknown },
    s: Live,
    raw: unknown,
  ) {
    const browser = await s.ready;
    if (!browser) return;
    let msg: unknown = raw;
    if (typeof raw === "string") {
      try {
        msg = JSON.parse(raw);
      } catch {
        return;
      }
    }
    if ((msg as { t?: unknown })?.t === "done") {
      try {
        await finishLogin(ctx, s.token, await browser.collect());
        ws.send(JSON.stringify({ t: "saved" }));
      } catch (err) {
        ws.send(
          JSON.stringify({
            t: "error",
            message: err instanceof AppError ? err.message : "could not save",
          }),
        );
      }
      ws.close();
      await end(ws.id);
      return;
    }
    const e = parseInputEvent(msg);
    if (e) await browser.input(e).catch(() => {});
  }
}
