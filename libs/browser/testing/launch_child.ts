/**
 * A stand-in daemon for the browser lifetime tests: launches Chromium, prints `{"pid","profile"}` and
 * waits to be killed. `pipe` launches through launchChromium; `legacy` launches the way browsers were
 * launched before (WebSocket transport, detached), in a profile of ours, to leave an orphan behind.
 */
import puppeteer from "puppeteer-core";
import { launchChromium } from "../src/chromium.ts";
import { findBrowser } from "../src/find_browser.ts";
import { createProfileDir } from "../src/profiles.ts";

const executable = findBrowser(null);
if (!executable) throw new Error("no Chromium");
if (process.argv[2] === "legacy") {
  const profile = createProfileDir();
  const browser = await puppeteer.launch({
    executablePath: executable,
    headless: true,
    args: ["--no-sandbox", `--user-data-dir=${profile}`],
  });
  console.log(JSON.stringify({ pid: browser.process()?.pid, profile }));
} else {
  const launched = await launchChromium(executable, { gpu: false, allowHosts: [] });
  console.log(JSON.stringify({ pid: launched.browser.process()?.pid, profile: launched.profileDir }));
}
setInterval(() => {}, 60_000);
