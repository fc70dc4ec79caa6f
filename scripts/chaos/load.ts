/**
 * The chaos run's clients: a recorder of every request to the API (status or how it failed, how long it
 * took), an open-loop load of a realistic mix (keyed reads, imports, signed uploads, screenshots) and a
 * probe that finds the first success after a dependency came back.
 */

/** How a request ended: the HTTP status, or `refused` (no connection), `no answer` (cut), `timeout`. */
export type Outcome = string;

export type Rec = {
  kind: string;
  outcome: Outcome;
  /** Start and end, performance.now() of this process. */
  t0: number;
  t1: number;
  /** Retry-After of a 429/503/507. */
  retryAfter: string | null;
  /** The body of an error answer (first 300 characters). */
  body?: string;
};

/** The client gives up on an answer after this long (far past every configured bound). */
export const CLIENT_TIMEOUT_MS = 30_000;

export class Recorder {
  recs: Rec[] = [];
  /** Renders queued (202) by this recorder's requests. */
  renders: string[] = [];

  /** One request to the API, recorded; the response (body read) or null when none came. */
  async call(
    kind: string,
    url: string,
    init: RequestInit = {},
  ): Promise<{ res: Response; json: any; text: string } | null> {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
      const text = await res.text();
      const rec: Rec = {
        kind,
        outcome: String(res.status),
        t0,
        t1: performance.now(),
        retryAfter: res.headers.get("retry-after"),
      };
      if (res.status >= 400) rec.body = text.slice(0, 300);
      this.recs.push(rec);
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {}
      return { res, json, text };
    } catch (err) {
      const e = err as { name?: string; code?: string; message?: string };
      const outcome =
        e.name === "TimeoutError"
          ? "timeout"
          : /refused/i.test(`${e.code} ${e.message}`)
            ? "refused"
            : "no answer";
      this.recs.push({ kind, outcome, t0, t1: performance.now(), retryAfter: null, body: e.message });
      return null;
    }
  }
}

/** What the load talks to; `api` stays the same across restarts (fixed port). */
export type Target = {
  api: string;
  key: string;
  siteId: string;
  /** An image on the HTTPS host (imports). */
  imageUrl: (n: number) => string;
  /** A page on the HTTP host (screenshots). */
  pageUrl: (n: number) => string;
  /** Bytes of a signed upload. */
  uploadBytes: Uint8Array<ArrayBuffer>;
};

export type Mix = { read: number; import: number; upload: number; screenshot: number };
export const DEFAULT_MIX: Mix = { read: 0.55, import: 0.2, upload: 0.2, screenshot: 0.05 };

const headers = (t: Target) => ({ authorization: `Bearer ${t.key}`, "content-type": "application/json" });

let seq = 0;

/** One request (or request chain, for a signed upload) of `kind`. */
export async function play(
  r: Recorder,
  t: Target,
  kind: keyof Mix | "read-sites",
  label: string = kind,
): Promise<void> {
  const n = ++seq;
  const h = headers(t);
  switch (kind) {
    case "read":
      if (n % 2) await r.call("read", `${t.api}/api/v1/sites?limit=20`, { headers: h });
      else await r.call("read", `${t.api}/api/v1/sites/${t.siteId}/media?limit=50`, { headers: h });
      return;
    case "read-sites":
      await r.call("read", `${t.api}/api/v1/sites?limit=20`, { headers: h });
      return;
    case "import":
      await r.call("import", `${t.api}/api/v1/sites/${t.siteId}/media/import-url`, {
        method: "POST",
        headers: h,
        body: JSON.stringify({ url: t.imageUrl(n), alt: "chaos" }),
      });
      return;
    case "upload": {
      const prep = await r.call("upload", `${t.api}/api/v1/sites/${t.siteId}/media/upload`, {
        method: "POST",
        headers: h,
        body: JSON.stringify({ contentType: "image/png", size: t.uploadBytes.byteLength }),
      });
      if (prep?.res.status !== 201) return;
      const up = prep.json.upload as { url: string; headers: Record<string, string> };
      // To the storage (S3: not our API; recorded apart) or to the API's own PUT route (local disk).
      const toApi = up.url.startsWith(t.api);
      const put = await r.call(toApi ? "put" : "s3-put", up.url, {
        method: "PUT",
        headers: up.headers,
        body: t.uploadBytes,
      });
      if (!put || put.res.status >= 300) return;
      await r.call("complete", `${t.api}/api/v1/sites/${t.siteId}/media/upload/${prep.json.name}/complete`, {
        method: "POST",
        headers: h,
      });
      return;
    }
    case "screenshot": {
      const out = await r.call(label, `${t.api}/api/v1/sites/${t.siteId}/media/screenshot`, {
        method: "POST",
        headers: h,
        body: JSON.stringify({ url: t.pageUrl(n), viewportWidth: 800, viewportHeight: 500 }),
      });
      if (out?.res.status === 202) r.renders.push(out.json.renderId);
      return;
    }
  }
}

/** An open-loop load: `rps` requests a second drawn from `mix`, until stopped (then waits for all). */
export function startLoad(r: Recorder, t: Target, rps: number, mix: Mix = DEFAULT_MIX) {
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const total = mix.read + mix.import + mix.upload + mix.screenshot;
  const pick = (): keyof Mix => {
    let x = Math.random() * total;
    for (const k of ["read", "import", "upload", "screenshot"] as const) {
      x -= mix[k];
      if (x < 0) return k;
    }
    return "read";
  };
  const loop = (async () => {
    while (!stopped) {
      const p = play(r, t, pick()).finally(() => inFlight.delete(p));
      inFlight.add(p);
      await Bun.sleep(1000 / rps);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

/**
 * After a dependency came back at `since`: plays `probe` every 200 ms (beside the load) until a request
 * of `kind` started after `since` answers 2xx; the time from `since` to the end of the first one, or null.
 */
export async function firstSuccess(
  r: Recorder,
  since: number,
  kind: string,
  probe: () => Promise<void>,
  ms = 30_000,
): Promise<number | null> {
  const deadline = since + ms;
  const found = () =>
    r.recs
      .filter((x) => x.t0 >= since && /^2\d\d$/.test(x.outcome) && x.kind === kind)
      .sort((a, b) => a.t1 - b.t1)[0];
  while (!found() && performance.now() < deadline) {
    await probe();
    if (!found()) await Bun.sleep(200);
  }
  const f = found();
  return f ? f.t1 - since : null;
}
