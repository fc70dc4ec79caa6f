/**
 * Film-step profile: where one film of the render bench's page goes, phase by phase, against a bare
 * puppeteer screenshot of the same page taken between the films (same load on a shared host).
 *   bun scripts/bench/film.ts [rounds]
 * Prints the first film of a fresh pool (browser launched by the pool's warm-up, as at daemon start),
 * then per phase p50 over the warm films: the pool's page hand-out, each set-up call (sent together),
 * navigation, settling, the cookie pop-up wait, checks, screenshot, and the pool's return.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  addressCheckFor,
  chromiumFlags,
  createBrowserPool,
  createUrlGuard,
  findFilmBrowser,
  isHeadlessShell,
} from "@site/browser";
import { html, LANDING, servePages } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { type ArmedPage, armPage, DEFAULT_TIMINGS, filmPage, warmPage } from "@site/render-daemon";
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import puppeteer from "puppeteer-core";

const rounds = Number(process.argv[2] ?? 15);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;

// FILM_PAGE=demo: the bundled demo page (scripts/bench/compose.ts films it) instead of the render bench's
const demo = join(import.meta.dir, "../../apps/render-daemon/demo/lumen.html");
const pages = servePages({
  "/": () => (process.env.FILM_PAGE === "demo" ? html(readFileSync(demo, "utf8")) : html(LANDING)),
});
// the browser the daemon films with (the headless shell where there is one; RENDER_HEADLESS_SHELL=0: not)
const executablePath = findFilmBrowser({
  chromiumPath: process.env.CHROMIUM_PATH ?? null,
  renderGpu: false,
  renderHeadlessShell: process.env.RENDER_HEADLESS_SHELL !== "0",
});
if (!executablePath) throw new Error("no Chromium");
const log = createLogger("error");
// as the daemon's pool: each spare page armed ahead; ARM=0 in a variant films on a pool that does not
const poolOf = (armed: boolean) =>
  createBrowserPool<ArmedPage | undefined>({
    executablePath,
    gpu: false,
    allowHosts: [pages.host],
    concurrency: 1,
    prepare: armed ? (page) => armPage(page) : undefined,
    log,
  });
const pools = { armed: poolOf(true), unarmed: null as ReturnType<typeof poolOf> | null };
const settings = {
  url: pages.url("/"),
  viewportWidth: 1440,
  viewportHeight: 900,
  deviceScaleFactor: 1,
  fullPage: false,
  theme: "light" as const,
  hideCookieBanners: true,
};

/** CPU seconds used so far by this process and its descendants (reaped children included), split by subtree. */
function cpuSeconds(): { bare: number; rest: number } {
  const parent = new Map<number, number>();
  const used = new Map<number, number>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(e), Number(f[1]));
      used.set(Number(e), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100);
    } catch {}
  }
  const bareRoot = bareBrowser?.process()?.pid;
  const out = { bare: 0, rest: 0 };
  for (const [pid, cpu] of used) {
    let p: number | undefined = pid;
    let inBare = false;
    for (let hops = 0; p && p !== process.pid && hops < 64; hops++) {
      if (p === bareRoot) inBare = true;
      p = parent.get(p);
    }
    if (p !== process.pid && pid !== process.pid) continue;
    if (inBare) out.bare += cpu;
    else out.rest += cpu;
  }
  return out;
}

/** One film through the pool, with each phase's end marked (ms since the film was asked for). */
async function film(): Promise<Map<string, number>> {
  const marks = new Map<string, number>();
  const t0 = performance.now();
  const mark = (phase: string) => marks.set(phase, performance.now() - t0);
  if (process.env.ARM === "0" && !pools.unarmed) pools.unarmed = poolOf(false);
  const pool = process.env.ARM === "0" && pools.unarmed ? pools.unarmed : pools.armed;
  await pool.withPage(async (page: Page, context: BrowserContext, armed) => {
    mark("pool: page handed out");
    const check = createUrlGuard({
      isBlocked: addressCheckFor({ allowLocalNetworkForDevelopment: false }),
      allowHosts: [pages.host],
    });
    const s = { ...settings, hideCookieBanners: process.env.FILM_NO_CONSENT !== "1" };
    await filmPage(page, context, s, check, { ...DEFAULT_TIMINGS, trace: mark }, armed);
  });
  mark("pool: returned");
  return marks;
}

let bareBrowser: Browser | null = null;
bareBrowser = await puppeteer.launch({
  executablePath,
  headless: isHeadlessShell(executablePath) ? "shell" : true,
  args: chromiumFlags(false),
});
const bare = async () => {
  const t0 = performance.now();
  const page = await (bareBrowser as Browser).newPage();
  try {
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(pages.url("/"), { waitUntil: "load" });
    await page.screenshot({ type: "png" });
  } finally {
    await page.close();
  }
  return performance.now() - t0;
};

try {
  await bare();
  // as at daemon start: the pool's browser launched, its first frame drawn, a spare page armed
  const w0 = performance.now();
  await pools.armed.withPage((page) => warmPage(page));
  await pools.armed.ready();
  if ((process.env.FILM_VARIANTS ?? "").includes("ARM=0")) {
    pools.unarmed = poolOf(false);
    await pools.unarmed.withPage(async () => {});
  }
  const warmMs = performance.now() - w0;
  const first = await film();
  console.log(
    `load ${(await Bun.file("/proc/loadavg").text()).trim()}\n` +
      `pool warm-up ${warmMs.toFixed(0)} ms; first film ${first.get("pool: returned")?.toFixed(0)} ms: ` +
      [...first].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", "),
  );
  // FILM_VARIANTS="a:K=V,K2=V2;b:" films each variant in turn every round, with its env vars set
  const variants = (process.env.FILM_VARIANTS ?? "film:").split(";").map((v) => {
    const [name, vars] = v.split(":");
    return {
      name: name as string,
      vars: (vars ?? "")
        .split(",")
        .filter(Boolean)
        .map((kv) => kv.split("=")),
    };
  });
  const runs = new Map(variants.map((v) => [v.name, [] as Map<string, number>[]]));
  const bares: number[] = [];
  const cpu = new Map(variants.map((v) => [v.name, 0]));
  let bareCpu = 0;
  for (let i = 0; i < rounds; i++) {
    for (const v of variants) {
      for (const [k, val] of v.vars) process.env[k as string] = val;
      const c0 = cpuSeconds().rest;
      runs.get(v.name)?.push(await film());
      await Bun.sleep(600); // the spare page is opened and armed after each film: counted with it
      cpu.set(v.name, (cpu.get(v.name) ?? 0) + cpuSeconds().rest - c0);
      for (const [k] of v.vars) delete process.env[k as string];
    }
    const b0 = cpuSeconds().bare;
    bares.push(await bare());
    await Bun.sleep(300);
    bareCpu += cpuSeconds().bare - b0;
  }
  for (const [name, rs] of runs) {
    const phases = [...new Set(rs.flatMap((r) => [...r.keys()]))];
    console.log(
      `\n${name}: warm films (${rounds}), p50 of ms since the film was asked for, and of each phase's own span:`,
    );
    for (const p of phases) {
      const at = rs.map((r) => r.get(p) ?? Number.NaN);
      // the phase's own span: from the latest mark before it (set-up calls run together: from hand-out)
      const span = rs.map((r) => {
        const end = r.get(p) ?? Number.NaN;
        const before = [...r].filter(
          ([k, v]) => v <= end && k !== p && !(p.startsWith("set-up:") && k.startsWith("set-up:")),
        );
        return end - Math.max(0, ...before.map(([, v]) => v));
      });
      console.log(
        `  ${p.padEnd(26)} at ${pct(at, 0.5).toFixed(0).padStart(5)}  span ${pct(span, 0.5).toFixed(0).padStart(5)}`,
      );
    }
    const total = rs.map((r) => r.get("pool: returned") ?? 0);
    console.log(
      `${name}: film p50 ${pct(total, 0.5).toFixed(0)} ms (min ${Math.min(...total).toFixed(0)}, p90 ${pct(total, 0.9).toFixed(0)}); ` +
        `CPU ${(((cpu.get(name) ?? 0) / rounds) * 1000).toFixed(0)} ms per film (this process and its Chromium)`,
    );
  }
  console.log(
    `bare shot p50 ${pct(bares, 0.5).toFixed(0)} ms (min ${Math.min(...bares).toFixed(0)}), CPU ${((bareCpu / rounds) * 1000).toFixed(0)} ms per shot (its Chromium); ` +
      `load ${(await Bun.file("/proc/loadavg").text()).trim()}`,
  );
} finally {
  await bareBrowser?.close();
  await Promise.all([pools.armed.close(), pools.unarmed?.close()]);
  pages.stop();
}
