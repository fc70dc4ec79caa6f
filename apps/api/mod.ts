/** The API app: `createApp` builds it from dependencies, `startApi` serves it on a runtime. */
export { createApp, type App } from "./src/app.ts";
export { startApi } from "./src/server.ts";
export { TOOLS } from "./src/mcp_tools.ts";
