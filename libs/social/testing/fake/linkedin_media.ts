/**
 * LinkedIn's Images API and Videos API on the fake: initializeUpload, the upload URLs that take the
 * bytes with the member's bearer token, finalizeUpload and a video's status.
 */
import {
  bearerOf,
  type FakeState,
  type Fetched,
  json,
  nextSeq,
  type PlatformCall,
  tooShort,
  typeOfBytes,
} from "./state.ts";

type LinkedinVideo = {
  owner: string;
  token: string;
  size: number;
  parts: { first: number; last: number; etag: string | null; bytes: Uint8Array | null }[];
  uploadToken: string;
  status: "WAITING_UPLOAD" | "PROCESSING" | "AVAILABLE" | "PROCESSING_FAILED";
  bytes: Fetched | null;
};

/** The shared state and the images and videos members uploaded to LinkedIn (by URN). */
export type LinkedinCtx = {
  s: FakeState;
  images: Map<string, { owner: string; token: string; bytes: Fetched | null }>;
  videos: Map<string, LinkedinVideo>;
  /** Each author's posts, newest first, as the Posts API finds them by author. */
  posts: Map<string, { id: string; commentary: string; createdAt: number }[]>;
};

/**
 * The Videos API (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api):
 * a video of 75 KB to 500 MB, declared by `fileSizeBytes`, uploaded in 4 MB parts (4,194,304 bytes, the
 * last one the rest), each PUT to its `uploadUrl` and answered with an ETag; `finalizeUpload` needs every
 * ETag in order; the bytes must be an MP4 ("Video specifications": MP4). Then PROCESSING, then AVAILABLE.
 */
const LI_PART = 4_194_304;

function unprocessable(message: string): Response {
  return json(422, { status: 422, code: "UNPROCESSABLE_ENTITY", message });
}

/** The base the upload URLs hang from: the fake's LinkedIn prefix. */
function originOf(url: URL): string {
  return url.origin + url.pathname.slice(0, url.pathname.indexOf("/rest/"));
}

/**
 * The upload URL of initializeUpload takes a PUT of the image bytes with the member's bearer token
 * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api#upload-the-image).
 */
export async function imageUpload(ctx: LinkedinCtx, req: Request, parts: string[]): Promise<Response> {
  const urn = decodeURIComponent(parts[1] ?? "");
  const img = ctx.images.get(urn);
  if (req.method !== "PUT" || !img || img.token !== bearerOf(req)) return new Response(null, { status: 403 });
  const bytes = new Uint8Array(await req.arrayBuffer());
  const type = typeOfBytes(bytes);
  // JPG, GIF and PNG images (same page, "Image specifications").
  if (!type || !["image/jpeg", "image/png", "image/gif"].includes(type))
    return json(400, { status: 400, code: "BAD_REQUEST", message: "unsupported image format" });
  img.bytes = { contentType: type, size: bytes.byteLength };
  return new Response(null, { status: 201 });
}

/** A PUT of one part of a video to its upload URL (Videos API, above). */
export async function videoUpload(ctx: LinkedinCtx, req: Request, parts: string[]): Promise<Response> {
  const v = ctx.videos.get(decodeURIComponent(parts[1] ?? ""));
  const part = v?.parts[Number(parts[2])];
  if (req.method !== "PUT" || !v || !part || v.token !== bearerOf(req))
    return new Response(null, { status: 403 });
  const bytes = new Uint8Array(await req.arrayBuffer());
  // Each part is exactly its firstByte–lastByte range (same page, "Upload the video").
  if (bytes.byteLength !== part.last - part.first + 1)
    return json(400, {
      status: 400,
      code: "BAD_REQUEST",
      message: "the part is not its declared byte range",
    });
  part.bytes = bytes;
  part.etag = `/etag-${nextSeq(ctx.s)}`;
  return new Response(null, { status: 200, headers: { etag: part.etag } });
}

/** initializeUploadRequest.owner (a person or organization URN) is required (images-api page). */
export async function initializeImage(ctx: LinkedinCtx, c: PlatformCall): Promise<Response> {
  const b = (await c.req.json().catch(() => ({}))) as { initializeUploadRequest?: { owner?: string } };
  const owner = b.initializeUploadRequest?.owner;
  if (!owner?.startsWith("urn:li:")) return unprocessable("initializeUploadRequest.owner is required");
  const urn = `urn:li:image:C4E${nextSeq(ctx.s)}`;
  ctx.images.set(urn, { owner, token: c.token, bytes: null });
  return json(200, {
    value: {
      uploadUrlExpiresAt: Date.now() + 3_600_000,
      uploadUrl: `${originOf(c.url)}/upload/${encodeURIComponent(urn)}`,
      image: urn,
    },
  });
}

/** The Videos API's calls under /rest/videos, or null for another path. */
export async function videosApi(ctx: LinkedinCtx, c: PlatformCall, path: string): Promise<Response | null> {
  const { req, parts } = c;
  const action = c.url.searchParams.get("action");
  if (req.method === "POST" && path === "rest/videos" && action === "initializeUpload")
    return initializeVideo(ctx, c);
  if (req.method === "POST" && path === "rest/videos" && action === "finalizeUpload")
    return finalizeVideo(ctx, c);
  if (req.method === "GET" && parts[0] === "rest" && parts[1] === "videos" && parts[2]) {
    const urn = decodeURIComponent(parts[2]);
    const v = ctx.videos.get(urn);
    if (!v) return json(404, { status: 404, code: "NOT_FOUND", message: "Not Found" });
    const status = v.status;
    // Processing ends by the next read.
    if (v.status === "PROCESSING") v.status = "AVAILABLE";
    return json(200, { id: urn, owner: v.owner, status, duration: 6000 });
  }
  return null;
}

async function initializeVideo(ctx: LinkedinCtx, c: PlatformCall): Promise<Response> {
  const b = (await c.req.json().catch(() => ({}))) as {
    initializeUploadRequest?: { owner?: string; fileSizeBytes?: number };
  };
  const owner = b.initializeUploadRequest?.owner;
  const size = Number(b.initializeUploadRequest?.fileSizeBytes);
  if (!owner?.startsWith("urn:li:")) return unprocessable("initializeUploadRequest.owner is required");
  // "Video specifications": length 3 s to 30 min, file size 75 KB to 500 MB.
  if (!Number.isInteger(size) || size < 75 * 1024 || size > 500 * 1024 * 1024)
    return unprocessable("fileSizeBytes must be between 75 KB and 500 MB");
  const n = nextSeq(ctx.s);
  const urn = `urn:li:video:D4E${n}`;
  const count = Math.ceil(size / LI_PART);
  const origin = originOf(c.url);
  const video: LinkedinVideo = {
    owner,
    token: c.token,
    size,
    parts: Array.from({ length: count }, (_, i) => ({
      first: i * LI_PART,
      last: Math.min(size, (i + 1) * LI_PART) - 1,
      etag: null,
      bytes: null,
    })),
    uploadToken: `ut-${n}`,
    status: "WAITING_UPLOAD",
    bytes: null,
  };
  ctx.videos.set(urn, video);
  return json(200, {
    value: {
      uploadUrlsExpireAt: Date.now() + 3_600_000,
      video: urn,
      uploadInstructions: video.parts.map((p, i) => ({
        uploadUrl: `${origin}/upload-video/${encodeURIComponent(urn)}/${i}`,
        firstByte: p.first,
        lastByte: p.last,
      })),
      uploadToken: video.uploadToken,
    },
  });
}

async function finalizeVideo(ctx: LinkedinCtx, c: PlatformCall): Promise<Response> {
  const b = (await c.req.json().catch(() => ({}))) as {
    finalizeUploadRequest?: { video?: string; uploadToken?: string; uploadedPartIds?: string[] };
  };
  const f = b.finalizeUploadRequest;
  const v = f?.video ? ctx.videos.get(f.video) : undefined;
  if (!v || v.token !== c.token || f?.uploadToken !== v.uploadToken)
    return unprocessable("finalizeUploadRequest: unknown video or upload token");
  const etags = v.parts.map((p) => p.etag);
  if (etags.some((e) => !e) || JSON.stringify(f.uploadedPartIds ?? []) !== JSON.stringify(etags))
    return unprocessable("uploadedPartIds must be the ETags of every part, in order");
  const all = new Uint8Array(v.size);
  for (const p of v.parts) all.set(p.bytes!, p.first);
  const type = typeOfBytes(all);
  // "Length: 3 seconds to 30 minutes" (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api#video-specifications):
  // a shorter video fails processing, after the upload.
  if (type !== "video/mp4" || tooShort(all, 3)) {
    v.status = "PROCESSING_FAILED";
    return new Response(null, { status: 200 });
  }
  v.bytes = { contentType: type, size: all.byteLength };
  v.status = "PROCESSING";
  return new Response(null, { status: 200 });
}
