import { authenticate, type Context, type Principal, requireScope, type Scope } from "@site/domain";

/** Authenticates a request's bearer key and checks one scope (401, then 403); cached per request. */
export type Guard = ((request: Request, scope: Scope) => Promise<Principal>) & {
  /** Route options that authenticate in `transform`, before body validation, so 401/403 win over 400. */
  hook(scope: Scope): { transform: (c: { request: Request }) => Promise<void> };
};

/** Builds the guard every authenticated route calls. */
export function createGuard(ctx: Context): Guard {
  const seen = new WeakMap<Request, Promise<Principal>>();
  const guard = async (request: Request, scope: Scope) => {
    let pending = seen.get(request);
    if (!pending) {
      pending = authenticate(ctx, request.headers.get("authorization"));
      seen.set(request, pending);
    }
    const principal = await pending;
    requireScope(principal, scope);
    return principal;
  };
  return Object.assign(guard, {
    hook: (scope: Scope) => ({
      transform: async ({ request }: { request: Request }) => {
        await guard(request, scope);
      },
    }),
  });
}
