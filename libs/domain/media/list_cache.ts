import type { Context } from "@site/domain/core";
import type { MediaLibraryPage as Page } from "./models.ts";

type Entry = { version: string; exp: number; page: Page };

/** Pages kept per process; a page of 50 is about 17 KB, so the cap bounds this near 20 MB. */
const MAX_PAGES = 1_000;

/**
 * Built library pages by (site, limit, cursor), each with the site's media version it was read at and
 * the expiry of the grants it carries. A page is served only while both still match (decision 0810):
 * the version comes from the database on every read, so a change by any process is seen at once.
 */
export class LibraryPageCache {
  #pages = new Map<string, Entry>();

  /** The page kept for (site, limit, cursor) whose grants expire at `exp`, with its version; else null. */
  get(siteId: string, limit: number, cursor: string | undefined, exp: number): Entry | null {
    const hit = this.#pages.get(`${siteId}\n${limit}\n${cursor ?? ""}`);
    return hit && hit.exp === exp ? hit : null;
  }

  /** Keeps a page read at `version`; the oldest page goes when the cache is full. */
  set(siteId: string, limit: number, cursor: string | undefined, version: string, exp: number, page: Page) {
    const id = `${siteId}\n${limit}\n${cursor ?? ""}`;
    this.#pages.delete(id);
    if (this.#pages.size >= MAX_PAGES) this.#pages.delete(this.#pages.keys().next().value!);
    this.#pages.set(id, { version, exp, page });
  }

  get size(): number {
    return this.#pages.size;
  }
}

// One cache per configuration (a process has one; tests build several apps, each with its own secret).
const caches = new WeakMap<object, LibraryPageCache>();

/** The library page cache of this context's configuration. */
export function pageCache(ctx: Context): LibraryPageCache {
  let cache = caches.get(ctx.config);
  if (!cache) {
    cache = new LibraryPageCache();
    caches.set(ctx.config, cache);
  }
  return cache;
}
