import { dirname, join } from "node:path";
import { swagger } from "@elysiajs/swagger";
import { Elysia } from "elysia";

// The package exports no path to its browser bundle; find it beside its entry point.
const SCALAR_JS = join(
  dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)),
  "browser",
  "standalone.js",
);

/** OpenAPI at /swagger/json and its UI at /swagger, whose script is served from the installed package. */
export function docsRoutes() {
  return new Elysia()
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
    )
    .use(
      swagger({
        path: "/swagger",
        scalarCDN: "/swagger/assets/standalone.js",
        // Offline-friendly: no hosted AI, MCP generator or deploy toolbar (they call Scalar's cloud);
        // the bearer scheme is preselected so "Try it" sends the key.
        scalarConfig: {
          withDefaultFonts: false,
          hideClientButton: true,
          showDeveloperTools: "never",
          agent: { disabled: true },
          mcp: { disabled: true },
          authentication: { preferredSecurityScheme: "bearerAuth" },
        } as never,
        exclude: ["/swagger/assets/standalone.js"],
        documentation: {
          info: {
            title: "Site Content API",
            version: "1.0.0",
            description:
              "Create sites, fill their media library with real files, render web pages into 3D device mockups and read social performance. All paths under /api/v1 need `Authorization: Bearer <API_KEY>`; errors are `{error:{code,message,details?}}`.",
          },
          components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
          tags: [
            { name: "sites", description: "Sites and templates" },
            { name: "pages", description: "Pages of a site" },
            { name: "media", description: "The media library and delivery" },
            { name: "screenshots", description: "Product screenshots in 3D device mockups" },
            { name: "social", description: "Social accounts, posts and performance" },
            { name: "operations", description: "Health" },
          ],
        },
      }),
    );
}
