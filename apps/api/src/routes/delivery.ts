import { AppError, SESSION_COOKIE } from "@site/domain/core";
import { authorizeMediaRead, orgOfSocialKey, receiveSignedUpload } from "@site/domain/media";
import { receiveSocialUpload } from "@site/domain/social";
import type { ByteRange } from "@site/storage";
import { Elysia } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errorResponses } from "../schemas.ts";

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

const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp", "image/gif"];

/** Credentials and conditional headers of a media read, as OpenAPI parameters. */
const READ_PARAMETERS = [
  {
    name: "k",
    in: "query",
    required: false,
    schema: { type: "string" },
    description: "a grant (member or visitor) minted by the API for this key",
  },
  {
    name: "t",
    in: "query",
    required: false,
    schema: { type: "string" },
    description: "a share token (`bun run admin media:share`)",
  },
  {
    name: SESSION_COOKIE,
    in: "cookie",
    required: false,
    schema: { type: "string" },
    description: "a member's session cookie",
  },
  {
    name: "Range",
    in: "header",
    required: false,
    schema: { type: "string", examples: ["bytes=0-99"] },
    description: "one byte range",
  },
  { name: "If-None-Match", in: "header", required: false, schema: { type: "string" } },
  { name: "If-Range", in: "header", required: false, schema: { type: "string" } },
];

const BYTES = { schema: { type: "string", contentMediaType: "application/octet-stream" } };

/** The answers of a media read: the bytes (whole or a range), not modified, or the contract's errors. */
function readResponses(head: boolean) {
  const body = head ? {} : { content: { "*/*": BYTES } };
  return {
    200: { description: "The file (its stored image type)", ...body },
    206: { description: "The requested byte range", ...body },
    304: { description: "Not modified (If-None-Match matched the ETag)" },
    ...errorResponses(403, 404),
  };
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
    .use(operationMacros)
    .get("/api/media/*", ({ request }) => serve(request, false), {
      operation: "getMediaFile",
      public: true,
      detail: {
        summary: "Deliver a media file (k grant, t share token, session cookie; identity assets public)",
        description:
          "No bearer token. Range, ETag/If-None-Match and If-Range are supported; answers carry nosniff and a sandboxing CSP.",
        tags: ["delivery"],
        parameters: READ_PARAMETERS,
        responses: readResponses(false),
      } as never,
    })
    .head("/api/media/*", ({ request }) => serve(request, true), {
      operation: "headMediaFile",
      public: true,
      detail: {
        summary: "Headers of a media file, same credentials as GET",
        tags: ["delivery"],
        parameters: READ_PARAMETERS,
        responses: readResponses(true),
      } as never,
    })
    .put(
      "/api/media/*",
      async ({ request }) => {
        const url = new URL(request.url);
        const key = decodeURIComponent(rawKeyPath(request));
        const req = {
          searchParams: url.searchParams,
          contentType: request.headers.get("content-type"),
          body: request.body,
        };
        // The social media library's uploads land in its own records (same signed-PUT mechanics).
        const out = orgOfSocialKey(key)
          ? await receiveSocialUpload(deps, key, req)
          : await receiveSignedUpload(deps, key, req);
        return Response.json(out, { status: 200 });
      },
      {
        operation: "receiveSignedUpload",
        public: true,
        parse: "none",
        detail: {
          summary: "Receive the bytes of a signed upload (local-disk storage only)",
          description:
            "The `upload.url` of POST /api/v1/sites/{siteId}/media/upload or POST /api/v1/social/media/upload, with exactly its `upload.headers`; no bearer token (the URL is signed). With S3 storage the URL is a presigned S3 PUT instead.",
          tags: ["delivery"],
          parameters: ["X-Expires", "X-Content-Type", "X-Size", "X-Signature"].map((name) => ({
            name,
            in: "query",
            required: true,
            schema: { type: "string" },
            description: "from the signed upload URL",
          })),
          requestBody: {
            required: true,
            description: "the image bytes; Content-Type exactly as signed",
            content: Object.fromEntries(IMAGE_TYPES.map((type) => [type, BYTES])),
          },
          responses: {
            200: {
              description: "The file landed and passed the type check",
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["publicUrl", "path", "name"],
                    properties: {
                      publicUrl: { type: "string", description: "the /api/media/<key> path to persist" },
                      path: { type: "string" },
                      name: { type: "string" },
                    },
                  },
                },
              },
            },
            ...errorResponses(400, 403, 404, 429),
          },
        } as never,
      },
    );
}
