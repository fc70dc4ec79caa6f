/** Screenshots: the style catalog, source-URL rules, options, projects (film once, frame many), renders and login links. */

export * from "./clip_models.ts";
export * from "./clips.ts";
export * from "./ffmpeg.ts";
export * from "./login_links.ts";
export * from "./models.ts";
export * from "./options.ts";
export * from "./projects.ts";
export * from "./render_stats.ts";
export * from "./render_sweep.ts";
export * from "./render_waits.ts";
export * from "./renders.ts";
export * from "./source_url.ts";
export * from "./styles.ts";
