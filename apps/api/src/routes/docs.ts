import { dirname, join } from "node:path";
import { escapeHtml } from "@site/domain/core";
import { Elysia, t } from "elysia";
import { toOpenApi30 } from "../openapi_30.ts";
import { buildOpenApiDocument } from "../openapi_document.ts";

// The package exports no path to its browser bundle; find it beside its entry point.
const SCALAR_JS = join(
  dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)),
  "browser",
  "standalone.js",
);

// Offline-friendly: no hosted AI, MCP generator or deploy toolbar (they call Scalar's cloud); the bearer
// scheme is preselected so "Try it" sends the key.
const SCALAR_CONFIG = {
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: "bearerAuth" },
};

function uiPage(): string {
  const config = escapeHtml(JSON.stringify(SCALAR_CONFIG));
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Site Content API</title>
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <script id="api-reference" data-url="/swagger/json" data-configuration="${config}"></script>
    <script src="/swagger/assets/standalone.js"></script>
  </body>
</html>`;
}

/**
 * OpenAPI 3.1 at /swagger/json (3.0.3 at /swagger/json?version=3.0; generated from the routes' schemas by @elysiajs/openapi, then finished
 * by `buildOpenApiDocument`) and its UI at /swagger, whose script is served from the installed package.
 */
export function docsRoutes(opts: { publicBaseUrl: string }) {
  const docs = new Elysia({ name: "docs" });
  let cached: Record<string, unknown> | null = null;
  let cached30: Record<string, unknown> | null = null;
  return docs
    .get(
      "/swagger",
      () => new Response(uiPage(), { headers: { "content-type": "text/html; charset=utf-8" } }),
      { detail: { hide: true } },
    )
    .get(
      "/swagger/json",
      ({ query }) => {
        // Built at the first request, when the app has all its routes (the generator reads them all).
        cached ??= buildOpenApiDocument(docs, opts);
        // `?version=3.0`: the same document for generators that read only OpenAPI 3.0 (decision 1532).
        if (query.version !== "3.0") return cached;
        cached30 ??= toOpenApi30(cached);
        return cached30;
      },
      {
        query: t.Object({ version: t.Optional(t.Union([t.Literal("3.0"), t.Literal("3.1")])) }),
        detail: { hide: true },
      },
    )
    .get(
      "/swagger/assets/standalone.js",
      () =>
        new Response(Bun.file(SCALAR_JS), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
          },
        }),
      { detail: { hide: true } },
    );
}
