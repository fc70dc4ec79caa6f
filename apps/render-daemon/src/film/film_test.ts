import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFilmBrowser, isHeadlessShell } from "@site/browser";
import { descendsFrom, processTable } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import { PermanentJobError } from "@site/queue";
import { decodeImage, pngSize } from "../frame/encode.ts";
import { createRenderPipeline } from "../pipeline.ts";
import type { CaptureSettings, RenderPipeline } from "../render_types.ts";
import { isLoginPath } from "./login_detection.ts";

setDefaultTimeout(120_000);

const html = (body: string, head = "") =>
  new Response(
    `<!doctype html><html><head><meta charset="utf-8">${head}</head><body style="margin:0">${body}</body></html>`,
    {
      headers: { "content-type": "text/html" },
    },
  );

const THEMED = `<style>html,body{background:#ffffff;height:100%}@media (prefers-color-scheme: dark){html,body{background:#000000}}</style>`;

// A second server that is NOT in FETCH_ALLOW_HOSTS: the browser must never reach it.
let forbiddenHits = 0;
const forbidden = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch() {
    forbiddenHits++;
    return new Response("nope");
  },
});

let workerReported = false;
let workerDone: (() => void) | undefined;
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    switch (url.pathname) {
      case "/themed":
        return html("<h1>theme</h1>", THEMED);
      case "/tall":
        return html(
          `<div style="height:${url.searchParams.get("h")}px;background:linear-gradient(#f00,#00f)"></div>`,
        );
      case "/app":
        return Response.redirect(`${url.origin}/users/sign_in?next=/app`, 302);
      case "/users/sign_in":
        return html(
          '<form><input name="email"><input type="password" name="pw"><button>Sign in</button></form>',
        );
      case "/plain-form":
        return html('<form><input type="password" name="pw"></form>');
      case "/leaky":
        return html(`<img src="http://127.0.0.1:${forbidden.port}/pixel.png"><p>hello</p>`);
      case "/worker": {
        workerReported = false;
        // The worker's attempt ends in a report to /worker-done; the page's load (the image at
        // /worker-wait) is held until then, so the film cannot finish before the worker has tried.
        const src = `fetch('http://127.0.0.1:${forbidden.port}/from-worker').catch(() => {}).finally(() => fetch('${url.origin}/worker-done'))`;
        return html(
          `<script>try { new Worker(URL.createObjectURL(new Blob([${JSON.stringify(src)}], { type: "text/javascript" }))); } catch {} try { new WebSocket("ws://127.0.0.1:${forbidden.port}/ws"); } catch {}</script><p>worker</p><img src="/worker-wait" width="1" height="1">`,
        );
      }
      case "/worker-done":
        workerReported = true;
        workerDone?.();
        return new Response("ok");
      case "/worker-wait":
        return new Promise<void>((r) => {
          if (workerReported) return r();
          workerDone = r;
          setTimeout(r, 10_000);
        }).then(() => new Response("", { status: 204 }));
      case "/to-forbidden":
        return Response.redirect(`http://127.0.0.1:${forbidden.port}/`, 302);
      case "/session": {
        const hasCookie = (req.headers.get("cookie") ?? "").includes("sid=s3cret");
        return html(
          `<script>document.documentElement.style.background = localStorage.getItem("token") === "t0k" ? "${hasCookie ? "#00ff00" : "#ffff00"}" : "#ff0000"</script>`,
        );
      }
      default:
        return new Response("missing", { status: 404 });
    }
  },
});

const base = `http://127.0.0.1:${site.port}`;
const dataDir = mkdtempSync(join(tmpdir(), "film-test-"));
let pipeline: RenderPipeline;

const settings = (path: string, over: Partial<CaptureSettings> = {}): CaptureSettings => ({
  url: `${base}${path}`,
  viewportWidth: 800,
  viewportHeight: 600,
  deviceScaleFactor: 1,
  fullPage: false,
  theme: "light",
  ...over,
});

async function pixel(png: Uint8Array, x: number, y: number): Promise<[number, number, number]> {
  const img = await decodeImage(png);
  const i = (y * img.width + x) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

let filmBrowser: string | null = null;

beforeAll(async () => {
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "film-test-secret-key" }),
    renderConcurrency: 1,
  };
  config.fetchAllowHosts = [`127.0.0.1:${site.port}`];
  filmBrowser = findFilmBrowser(config);
  pipeline = await createRenderPipeline({ config, log: createLogger("error") });
});

afterAll(async () => {
  await pipeline?.close();
  site.stop(true);
  forbidden.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("film", () => {
  test("films with the headless shell where one is installed beside Chromium (decision 1214)", async () => {
    await pipeline.film(settings("/themed", { viewportWidth: 320, viewportHeight: 200 }));
    const table = processTable();
    const browsers = [...table.values()].filter(
      (p) => descendsFrom(table, p.pid, process.pid) && !p.cmdline.includes("--type="),
    );
    const filming = browsers.filter((p) => p.cmdline.split("\0")[0] === filmBrowser);
    expect(filming.length).toBeGreaterThan(0);
    expect(filming[0]?.cmdline).toContain(
      isHeadlessShell(filmBrowser as string) ? "--headless\0" : "--headless=new",
    );
  });

  test("films the first screen at the viewport size times the device scale factor", async () => {
    const cap = await pipeline.film(
      settings("/themed", { viewportWidth: 640, viewportHeight: 400, deviceScaleFactor: 2 }),
    );
    expect(pngSize(cap.png)).toEqual({ width: 1280, height: 800 });
    expect([cap.width, cap.height]).toEqual([1280, 800]);
    expect(cap.finalUrl).toBe(`${base}/themed`);
    expect(cap.warnings).toEqual([]);
  });

  test("the theme sets prefers-color-scheme: light films white, dark films black", async () => {
    const light = await pipeline.film(settings("/themed", { theme: "light" }));
    const dark = await pipeline.film(settings("/themed", { theme: "dark" }));
    expect(await pixel(light.png, 400, 500)).toEqual([255, 255, 255]);
    expect(await pixel(dark.png, 400, 500)).toEqual([0, 0, 0]);
  });

  test("full page films the whole scroll height", async () => {
    const cap = await pipeline.film(settings("/tall?h=2000", { fullPage: true }));
    expect(pngSize(cap.png)).toEqual({ width: 800, height: 2000 });
    expect(cap.warnings).toEqual([]);
    const top = await pixel(cap.png, 400, 5);
    const bottom = await pixel(cap.png, 400, 1995);
    expect(top[0]).toBeGreaterThan(200);
    expect(bottom[2]).toBeGreaterThan(200);
  });

  test("a very tall page is cut and the warning says so", async () => {
    const cap = await pipeline.film(settings("/tall?h=30000", { fullPage: true }));
    expect(cap.height).toBe(12000);
    expect(pngSize(cap.png).height).toBe(12000);
    expect(cap.warnings.some((w) => w.includes("30000 px tall") && w.includes("cut at 12000"))).toBe(true);
  });

  test("a redirect to a sign-in form gives a warning naming the redirect and the next step", async () => {
    const cap = await pipeline.film(settings("/app"));
    expect(cap.finalUrl).toBe(`${base}/users/sign_in?next=/app`);
    const warning = cap.warnings.find((w) => w.startsWith("login redirect"));
    expect(warning).toContain("/users/sign_in");
    expect(warning).toContain("screenshot-login");
    expect(warning).toContain("recapture: true");
  });

  test("a password field without a redirect is not a login warning", async () => {
    const cap = await pipeline.film(settings("/plain-form"));
    expect(cap.warnings).toEqual([]);
    expect(isLoginPath("/login")).toBe(true);
    expect(isLoginPath("/pricing")).toBe(false);
  });

  test("a sub-request to an address outside the allow list is blocked and reported", async () => {
    forbiddenHits = 0;
    const cap = await pipeline.film(settings("/leaky"));
    expect(forbiddenHits).toBe(0);
    expect(
      cap.warnings.some((w) => w.includes(`127.0.0.1:${forbidden.port}`) && w.startsWith("blocked 1")),
    ).toBe(true);
  });

  test("workers and sockets cannot reach a non-allowed address either", async () => {
    forbiddenHits = 0;
    const cap = await pipeline.film(settings("/worker"));
    expect(cap.warnings.join(" ")).toContain("/from-worker");
    expect(forbiddenHits).toBe(0);
  });

  test("a page or redirect to a non-public address fails for good without a connection", async () => {
    forbiddenHits = 0;
    const direct = pipeline.film({ ...settings("/"), url: `http://127.0.0.1:${forbidden.port}/` });
    await expect(direct).rejects.toBeInstanceOf(PermanentJobError);
    const redirected = pipeline.film(settings("/to-forbidden"));
    await expect(redirected).rejects.toBeInstanceOf(PermanentJobError);
    await expect(pipeline.film({ ...settings("/"), url: "file:///etc/passwd" })).rejects.toBeInstanceOf(
      PermanentJobError,
    );
    expect(forbiddenHits).toBe(0);
  });

  test("the stored login session (cookies and local storage) is applied before navigation", async () => {
    const without = await pipeline.film(settings("/session"));
    expect(await pixel(without.png, 10, 10)).toEqual([255, 0, 0]);
    const withSession = await pipeline.film(
      settings("/session", {
        cookies: [{ name: "sid", value: "s3cret", domain: "127.0.0.1", path: "/" }],
        localStorage: { [base]: { token: "t0k" } },
      }),
    );
    expect(await pixel(withSession.png, 10, 10)).toEqual([0, 255, 0]);
  });
});
