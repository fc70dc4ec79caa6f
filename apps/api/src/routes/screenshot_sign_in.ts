import { findBrowser, type HostedBrowser, openHostedBrowser, parseInputEvent } from "@site/browser";
import { AppError, type Context } from "@site/domain/core";
import { finishLogin, openLoginLink } from "@site/domain/screenshots";
import { Elysia } from "elysia";
import { interactivePage, manualPage, refusedPage } from "./screenshot_sign_in_pages.ts";

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
  orgId: string;
  ready: Promise<HostedBrowser | null>;
  /** Input and Done run one after another, in the order the page sent them. */
  chain: Promise<unknown>;
  timer?: ReturnType<typeof setTimeout>;
};

/**
 * Why a hosted browser is refused when too many run: the process's total (LOGIN_BROWSERS_MAX) or the
 * organization's share of it (LOGIN_BROWSERS_PER_ORG), so one organization cannot hold them all (0473).
 */
export function loginBrowserRefusal(
  live: Iterable<{ orgId: string }>,
  orgId: string,
  caps: { total: number; perOrg: number },
): { code: string; message: string } | null {
  let total = 0;
  let mine = 0;
  for (const s of live) {
    total++;
    if (s.orgId === orgId) mine++;
  }
  if (mine >= caps.perOrg)
    return {
      code: "ORG_LOGIN_BROWSER_LIMIT",
      message:
        `Your organization already has ${mine} hosted sign-in browser${mine === 1 ? "" : "s"} open, ` +
        `the most one organization may use at once (${caps.perOrg}). Finish or close that sign-in, then try again.`,
    };
  if (total >= caps.total)
    return {
      code: "LOGIN_BROWSERS_BUSY",
      message: `All ${caps.total} hosted sign-in browsers of this server are in use by others; try again in a few minutes.`,
    };
  return null;
}

/**
 * The hosted sign-in page behind a login link: GET shows it (a live screencast of a hosted Chromium,
 * or, without a browser, how to give credentials by hand); its WebSocket streams frames and forwards
 * mouse and keyboard; Done stores the browser's session encrypted. Expired or used links are refused,
 * and so is a browser past the process's or the organization's cap (the message names which).
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
        const fail = (message: string, code?: string) => {
          ws.send(JSON.stringify({ t: "error", ...(code ? { code } : {}), message }));
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
        // Checked and counted with no await in between, so concurrent opens cannot pass the caps together.
        const refused = loginBrowserRefusal(live.values(), link.orgId, ctx.config.loginBrowsers);
        if (refused) return fail(refused.message, refused.code);
        byToken.add(token);
        const ready = openHostedBrowser({ config: ctx.config, log: ctx.log, url: link.sourceUrl }).catch(
          (err) => {
            ctx.log.warn("hosted browser failed to start", { cause: err });
            fail("The hosted browser could not start.");
            return null;
          },
        );
        const s: Live = { token, orgId: link.orgId, ready, chain: Promise.resolve() };
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
