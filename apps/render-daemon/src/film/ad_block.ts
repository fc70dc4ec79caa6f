// blockAds: requests to advertising hosts, as Ghostery's tracker database names them (decision 1202).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FiltersEngine, Request } from "@ghostery/adblocker";

let engine: FiltersEngine | null = null;

/**
 * The network filters of @ghostery/trackerdb whose organisation is in the `advertising` category
 * (`trackerdb_filter` entries; the `trackerdb_domain` ones only attribute domains and are left out),
 * parsed once by Ghostery's adblocker engine. Shipped in the npm package: nothing is downloaded.
 */
export function adFilters(): FiltersEngine {
  if (engine) return engine;
  const file = join(
    dirname(fileURLToPath(import.meta.resolve("@ghostery/trackerdb"))),
    "..",
    "trackerdb.txt",
  );
  const lines = readFileSync(file, "utf8").split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length - 1; i++) {
    const note = lines[i];
    if (
      note.startsWith("!") &&
      note.includes("trackerdb_category:advertising") &&
      note.includes("trackerdb_filter")
    )
      kept.push(lines[i + 1]);
  }
  engine = FiltersEngine.parse(kept.join("\n"), { loadCosmeticFilters: false, loadNetworkFilters: true });
  return engine;
}

/** True when `url`, requested by a page at `pageUrl` as `type` (puppeteer's resource type), is an ad request. */
export function isAdRequest(url: string, pageUrl: string, type: string): boolean {
  const { match } = adFilters().match(
    Request.fromRawDetails({
      url,
      sourceUrl: pageUrl,
      type: type as Parameters<typeof Request.fromRawDetails>[0]["type"],
    }),
  );
  return match;
}
