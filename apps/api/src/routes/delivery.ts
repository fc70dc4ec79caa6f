import { Elysia } from "elysia";
import { AppError, authorizeMediaRead, receiveSignedUpload, SESSION_COOKIE } from "@site/domain";
import type { ByteRange } from "@site/storage";
import type { AppDeps } from "../deps.ts";

const PREFIX = "/api/media/";

function rawKeyPath(request: Request): string {
  const url = new URL(request.url);
  return url.pathname.slice(PREFIX.length);
}

function cookieValue(header: string | null, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=") || null;
  }
  return null;
}

/** A single satisfiable `bytes=` range; anything else is ignored (RFC 9110 lets a server send it all). */
export function parseRange(header: string | null, size: number): ByteRange | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? "").trim());
  if (!m || (m[1] === "" && m[2] === "") || size === 0) return null;
  if (m[1] === "") {
    const n = Math.min(Number(m[2]), size);
    return n > 0 ? { start: size - n, end: size - 1 } : null;
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start < size && start <= end ? { start, end } : null;
}

/** The delivery route: GET/HEAD /api/media/<key> behind grants, and the local signed PUT. */
export function deliveryRoutes(deps: AppDeps) {
  const serve = async (request: Request, head: boolean) => {
    const url = new URL(request.url);
    const decision = await authorizeMediaRead(deps, rawKeyPath(request), {
      k: url.searchParams.get("k"),
      t: url.searchParams.get("t"),
      session: cookieValue(request.headers.get("cookie"), SESSION_COOKIE),
    });
    // The library row answers HEAD, ETag and Range without a round trip to the store.
    const info = decision.file?.etag
      ? { ...decision.file, etag: decision.file.etag }
      : await deps.store.head(decision.key);
    if (!info) throw new AppError("NOT_FOUND", "media file not found");
    const headers = new Headers({
      "content-type": info.contentType,
      etag: info.etag,
      "last-modified": info.lastModified.toUTCString(),
      "cache-control": decision.cacheControl,
      "accept-ranges": "bytes",
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "content-disposition": "inline",
    });
    const inm = request.headers.get("if-none-match");
    if (inm?.split(",").some((e) => e.trim() === info.etag || e.trim() === "*"))
      return new Response(null, { status: 304, headers });
    const ifRange = request.headers.get("if-range");
    const range =
      !ifRange || ifRange === info.etag ? parseRange(request.headers.get("range"), info.size) : null;
    const status = range ? 206 : 200;
    const length = range ? range.end - range.start + 1 : info.size;
    headers.set("content-length", String(length));
    if (range) headers.set("content-range", `bytes ${range.start}-${range.end}/${info.size}`);
    if (head) return new Response(null, { status, headers });
    const got = await deps.store.get(decision.key, range ? { range } : {});
    if (!got) throw new AppError("NOT_FOUND", "media file not found");
    return new Response(got.blob ?? got.body, { status, headers });
  };
  return new Elysia()
    .get("/api/media/*", ({ request }) => serve(request, false), {
      detail: {
        summary: "Deliver a media file (k grant, t share token, session cookie; identity assets public)",
        tags: ["delivery"],
      },
    })
    .head("/api/media/*", ({ request }) => serve(request, true), {
      detail: { summary: "Headers of a media file, same credentials as GET", tags: ["delivery"] },
    })
    .put(
      "/api/media/*",
      async ({ request }) => {
        const url = new URL(request.url);
        const out = await receiveSignedUpload(deps, decodeURIComponent(rawKeyPath(request)), {
          searchParams: url.searchParams,
          contentType: request.headers.get("content-type"),
          body: request.body,
        });
        return Response.json(out, { status: 200 });
      },
      {
        parse: "none",
        detail: {
          summary: "Receive the bytes of a signed upload (local-disk storage only)",
          tags: ["delivery"],
        },
      },
    );
}
