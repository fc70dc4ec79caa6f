/** The API app: `createApp` builds it from dependencies, `startApi` serves it on a runtime. */
export { type App, createApp } from "./src/app.ts";
export { TOOLS } from "./src/mcp_tools.ts";
export { documentedRoutes, undeclaredRoutes } from "./src/operations.ts";
export { startApi } from "./src/server.ts";
