import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "@site/config";
import { type EgressProxy, type EgressRefusal, type Resolver, startEgressProxy } from "@site/net";
import puppeteer, { type Browser } from "puppeteer-core";
import { copyNssTrust, ExtraCaError, nssTrustTemplate } from "./extra_ca.ts";
import { isHeadlessShell } from "./find_browser.ts";
import { createProfileDir, sweepOrphanBrowsers } from "./profiles.ts";

const COMMON_FLAGS = [
  "--no-sandbox",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-dev-shm-usage",
  "--mute-audio",
  "--hide-scrollbars",
  // WebRTC may use UDP only through a proxy that carries UDP (ours does not): no direct UDP, no STUN.
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  // No spare renderer: Chromium starts one ahead for the next navigation of the context last used, and
  // every film has a context of its own, so each spare was started and thrown away unused (a renderer
  // start is 0.1–0.2 s of CPU on a 2-core host; decision 1213).
  "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider,SpareRendererForSitePerProcess",
];

/** The launch flags: SwiftShader WebGL on CPU hosts, the GPU's ANGLE backend when `gpu` is set. */
export function chromiumFlags(gpu: boolean): string[] {
  const graphics = gpu
    ? [
        "--use-angle=vulkan",
        "--enable-features=Vulkan",
        "--disable-vulkan-surface",
        "--enable-gpu",
        "--ignore-gpu-blocklist",
      ]
    : ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"];
  return [...COMMON_FLAGS, ...graphics];
}

function killGroup(browser: Browser): void {
  const proc = browser.process();
  if (!proc?.pid) return;
  try {
    // puppeteer starts Chromium detached, as the leader of a process group of its own.
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    proc.kill("SIGKILL");
  }
}

/**
 * Every connection through the egress proxy: `<-loopback>` removes Chromium's implicit bypass of
 * localhost and 127/8, so loopback is checked like any other address.
 */
export function proxyFlags(proxyUrl: string): string[] {
  return [`--proxy-server=${proxyUrl}`, "--proxy-bypass-list=<-loopback>"];
}

/** How a Chromium of ours is launched. */
export type LaunchOptions = {
  gpu: boolean;
  /** FETCH_ALLOW_HOSTS: the same exemptions as imports; production leaves it empty. */
  allowHosts: readonly string[];
  /** ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: the egress proxy lets this machine and its network through. */
  localNetwork?: boolean;
  /** NODE_EXTRA_CA_CERTS: a PEM bundle of extra authorities this host trusts, as imports do. */
  extraCaFile?: string | null;
  /**
   * Composite pages in software (the GPU process stays, for WebGL): for browsers that film pages on a
   * host without a GPU, where compositing on SwiftShader costs CPU for nothing.
   */
  softwareCompositing?: boolean;
  /** Name resolution of the egress proxy; tests inject one, production uses the system resolver. */
  resolve?: Resolver;
  log?: Logger;
};

/** Subscribes to the connections the browser's egress proxy refuses; returns the unsubscribe. */
export type RefusalWatch = (fn: (refusal: EgressRefusal) => void) => () => void;

/** A launched Chromium with its own egress proxy and throwaway profile directory, both gone on close. */
export type LaunchedBrowser = {
  browser: Browser;
  profileDir: string;
  proxy: EgressProxy;
  onRefused: RefusalWatch;
  /** SIGKILLs the browser and every process of its group (renderers, GPU, zygote) at once. */
  kill(): void;
  close(): Promise<void>;
};

const watches = new WeakMap<Browser, RefusalWatch>();

/** Watches the refusals of the proxy a browser of ours runs behind (a no-op for any other browser). */
export function watchRefusals(browser: Browser, fn: (refusal: EgressRefusal) => void): () => void {
  return watches.get(browser)?.(fn) ?? (() => {});
}

let swept = false;
const warnedCa = new Set<string>();

/** The HOME Chromium gets: one whose NSS database trusts the extra CAs, or undefined (inherit). */
async function trustHome(profile: string, opts: LaunchOptions): Promise<string | undefined> {
  if (!opts.extraCaFile) return undefined;
  const home = join(profile, "home");
  try {
    copyNssTrust(await nssTrustTemplate(opts.extraCaFile, () => createProfileDir()), home);
    return home;
  } catch (err) {
    if (!(err instanceof ExtraCaError)) throw err;
    if (!warnedCa.has(err.message)) {
      warnedCa.add(err.message);
      opts.log?.warn("chromium: the extra certificate authorities are not trusted by the browser", {
        cause: err.message,
      });
    }
    return undefined;
  }
}

/**
 * Launches headless Chromium behind a fresh egress proxy of ours (the import guard's rules on every
 * connection it makes), over a pipe (the browser exits when this process dies, however it dies), with a
 * profile directory owned by this process. The first launch of a process sweeps browsers orphaned by a
 * previous one.
 */
export async function launchChromium(executablePath: string, opts: LaunchOptions): Promise<LaunchedBrowser> {
  if (!swept) {
    swept = true;
    const r = sweepOrphanBrowsers();
    if (r.removed) opts.log?.info("chromium: swept browsers left by a dead process", r);
  }
  const listeners = new Set<(r: EgressRefusal) => void>();
  const profile = createProfileDir();
  let proxy: EgressProxy | null = null;
  try {
    proxy = await startEgressProxy({
      allowHosts: opts.allowHosts,
      localNetwork: opts.localNetwork,
      resolve: opts.resolve,
      onRefused: (r) => {
        for (const fn of listeners) fn(r);
      },
    });
    const home = await trustHome(profile, opts);
    const browser = await puppeteer.launch({
      executablePath,
      // the headless shell is the old headless mode, built alone (decision 1214)
      headless: isHeadlessShell(executablePath) ? "shell" : true,
      pipe: true,
      ...(home ? { env: { ...process.env, HOME: home } } : {}),
      args: [
        ...chromiumFlags(opts.gpu),
        ...(opts.softwareCompositing ? ["--disable-gpu-compositing"] : []),
        ...proxyFlags(proxy.url),
        `--user-data-dir=${profile}`,
      ],
      protocolTimeout: 60_000,
      // Our processes own their shutdown: puppeteer's handlers would kill every browser on SIGTERM or
      // SIGINT, cutting renders in progress short of their grace (issue 18.5). Its exit hook stays, so
      // browsers still go when the process exits.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const onRefused: RefusalWatch = (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    };
    watches.set(browser, onRefused);
    const running = proxy;
    return {
      browser,
      profileDir: profile,
      proxy: running,
      onRefused,
      kill: () => killGroup(browser),
      close: async () => {
        try {
          if (browser.connected) await browser.close();
        } catch {
          killGroup(browser);
        } finally {
          await running.close();
          rmSync(profile, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    await proxy?.close();
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
