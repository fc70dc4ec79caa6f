import { AppError } from "@site/domain/core";
import {
  connectClearCookie,
  connectCookiesOf,
  finishConnect,
  isSocialPlatform,
  PendingConnectionView,
  SocialAccountView,
} from "@site/domain/social";
import { createOAuthPort } from "@site/social";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/**
 * The OAuth callback the platforms send the user back to (no bearer: the single-use state carries the
 * organization and the starting user). The code is exchanged at once (codes live seconds to minutes).
 * The browser that started the connect (its `sca_connect` cookie matches the state) gets the contract's
 * answer: 302 redirectUri?account=<id> or 200 {account}. Any other browser gets the confirmation step
 * (decisions 1016, 1030): 302 redirectUri?state=&confirm= or 200 {pending}. Errors: ?error=<code> or the
 * error body.
 */
export function socialOAuthCallbackRoutes(deps: AppDeps) {
  const oauth = createOAuthPort(deps.config);
  return new Elysia().use(operationMacros).get(
    "/api/v1/social/oauth/:platform/callback",
    async ({ params, query, set, request }) => {
      if (!isSocialPlatform(params.platform)) throw new AppError("NOT_FOUND", "no such platform");
      const cookies = connectCookiesOf(request.headers.get("cookie"));
      const out = await finishConnect(deps, params.platform, query, oauth, cookies);
      if (cookies.length > 0) set.headers["set-cookie"] = connectClearCookie(deps.config);
      set.headers["cache-control"] = "no-store";
      if (out.redirectUri) {
        const u = new URL(out.redirectUri);
        if (!out.ok) u.searchParams.set("error", out.code);
        else if ("account" in out) u.searchParams.set("account", out.account.id);
        else {
          u.searchParams.set("state", out.pending.state);
          u.searchParams.set("confirm", out.pending.confirm);
        }
        set.status = 302;
        set.headers.location = u.toString();
        // A confirmation may be in the address: it must not leak to another site through Referer.
        set.headers["referrer-policy"] = "no-referrer";
        return null;
      }
      if (!out.ok) throw out.error;
      return "account" in out ? { account: out.account } : { pending: out.pending };
    },
    {
      operation: "completeSocialOAuth",
      public: true,
      query: t.Object({
        code: t.Optional(t.String({ maxLength: 4096 })),
        state: t.Optional(t.String({ maxLength: 200 })),
        error: t.Optional(t.String({ maxLength: 200 })),
        error_description: t.Optional(t.String({ maxLength: 2000 })),
      }),
      response: {
        200: t.Union([
          t.Object({ account: SocialAccountView }, { description: "the browser that started the connect" }),
          t.Object(
            { pending: PendingConnectionView },
            { description: "another browser: the starting user confirms it" },
          ),
        ]),
        302: t.Null({
          description:
            "to the connect call's redirectUri: ?account=<id> (the browser that started the connect), ?state=<state>&confirm=<token> (another browser) or ?error=<code>",
        }),
        ...errors(400, 404, 503),
      },
      detail: {
        summary: "OAuth callback of a platform (no bearer)",
        description:
          "Exchanges the code for access and refresh tokens. The browser that started the connect (it carries the `sca_connect` cookie the connect answer set for this state) gets the account stored at once: 302 to the redirectUri with ?account=<id>, or 200 {account}. Any other browser cannot link an account by itself (a victim approving someone else's authorize URL): the tokens are held encrypted and this browser gets a one-time `confirm` (302 ?state=&confirm=, or 200 {pending}), which only the user who started the connection can confirm (POST /api/v1/social/accounts/connect/confirm). An unknown, expired or used state, or a code the platform refuses (replayed), is 400 VALIDATION_ERROR (or ?error= on the redirect).",
        tags: ["social"],
      },
    },
  );
}
