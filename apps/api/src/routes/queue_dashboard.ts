import { createHmac, timingSafeEqual } from "node:crypto";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ElysiaAdapter } from "@bull-board/elysia";
import type { Config, Logger } from "@site/config";
import { openQueuesForDashboard } from "@site/queue";
import { Elysia } from "elysia";

/** Where the queue dashboard lives. */
export const QUEUE_DASHBOARD_PATH = "/admin/queues";

const COOKIE = "operator_session";

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieOf(header: string | null): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === COOKIE) return v.join("=") || null;
  }
  return null;
}

/**
 * Decides an operator request: `Authorization: Bearer <OPERATOR_TOKEN>` (scripts), or the session
 * cookie the entry page sets after `?token=<OPERATOR_TOKEN>` (a browser, whose dashboard then calls
 * its API with the cookie). The cookie holds an HMAC of the token, never the token.
 */
export function operatorGate(config: Pick<Config, "operatorToken" | "secretKey">) {
  const token = config.operatorToken ?? "";
  const session = createHmac("sha256", config.secretKey).update(`operator:${token}`).digest("hex");
  return (request: Request): Response | undefined => {
    const url = new URL(request.url);
    if (url.pathname !== QUEUE_DASHBOARD_PATH && !url.pathname.startsWith(`${QUEUE_DASHBOARD_PATH}/`)) return;
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    if (bearer && sameText(bearer, token)) return;
    const cookie = cookieOf(request.headers.get("cookie"));
    if (cookie && sameText(cookie, session)) return;
    const given = url.searchParams.get("token");
    if (given && sameText(given, token)) {
      url.searchParams.delete("token");
      return new Response(null, {
        status: 303,
        headers: {
          location: `${url.pathname}${url.search}`,
          "set-cookie": `${COOKIE}=${session}; Path=${QUEUE_DASHBOARD_PATH}; HttpOnly; SameSite=Strict; Max-Age=43200`,
          "cache-control": "no-store",
        },
      });
    }
    return Response.json(
      { error: { code: "UNAUTHORIZED", message: "the queue dashboard needs the operator token" } },
      {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="operators"', "cache-control": "no-store" },
      },
    );
  };
}

/**
 * What the dashboard's pages may load: this origin only (bull-board's page links Google Fonts; it is
 * removed, and the browser is told to fetch nothing from elsewhere). Decision 0713.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

/** The dashboard page without its outside requests (the Google Fonts stylesheet; the UI falls back to sans-serif). */
export function withoutOutsideRequests(html: string): string {
  return html.replace(/<link[^>]+href="https?:\/\/[^"]*"[^>]*>\s*/g, "");
}

function localOnly(
  response: unknown,
  set: { headers: Record<string, unknown> },
): Response | Promise<Response> | undefined {
  if (response instanceof Response) {
    if (!(response.headers.get("content-type") ?? "").includes("text/html")) return;
    const headers = new Headers(response.headers);
    headers.set("content-security-policy", DASHBOARD_CSP);
    headers.delete("content-length");
    return response
      .text()
      .then((html) => new Response(withoutOutsideRequests(html), { status: response.status, headers }));
  }
  if (typeof response === "string" && /^\s*<!DOCTYPE html/i.test(response)) {
    return new Response(withoutOutsideRequests(response), {
      headers: {
        ...(set.headers as Record<string, string>),
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": DASHBOARD_CSP,
      },
    });
  }
}

/**
 * The operators' queue dashboard (bull-board) at /admin/queues, behind OPERATOR_TOKEN: the render
 * queue's jobs by state, their data and errors, read-only (no clean, retry, promote or delete: the
 * token opens a view, decision 0713). Only with Redis (BullMQ) and a token; the in-process queue has
 * nothing to show from outside (see `bun run admin queue:status`).
 */
export async function queueDashboardRoutes(config: Config, log: Logger): Promise<Elysia> {
  const none = new Elysia({ name: "queue-dashboard" });
  if (!config.redisUrl || !config.operatorToken) return none;
  const { queues, close } = openQueuesForDashboard({ redisUrl: config.redisUrl, prefix: config.queuePrefix });
  const adapter = new ElysiaAdapter(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "Site Content API queues" } },
  });
  const gate = operatorGate(config);
  let board: Elysia;
  try {
    board = (await adapter.registerPlugin()) as unknown as Elysia;
  } catch (err) {
    log.error("queue dashboard could not start", { cause: String(err) });
    await close();
    return none;
  }
  log.info("queue dashboard mounted", { path: QUEUE_DASHBOARD_PATH });
  const mounted = new Elysia({ name: "queue-dashboard" })
    .onRequest(({ request }) => gate(request))
    .mapResponse({ as: "scoped" }, ({ responseValue, set }) => localOnly(responseValue, set))
    .onStop(close)
    .use(board);
  return mounted as unknown as Elysia;
}
