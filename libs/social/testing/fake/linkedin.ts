/**
 * LinkedIn on the fake: OpenID userinfo, the versioned REST API (LinkedIn-Version required, sunset
 * versions refused), posts of uploaded images or a video, and socialActions behind a restricted scope.
 */
import { imageUpload, initializeImage, type LinkedinCtx, videosApi, videoUpload } from "./linkedin_media.ts";
import {
  type FakeState,
  type Fetched,
  hasScope,
  isExpired,
  json,
  metricsOf,
  nextSeq,
  now,
  type PlatformCall,
} from "./state.ts";

/** The LinkedIn handler (`parts` below the LinkedIn prefix: v2/, rest/ and the upload URLs). */
export function fakeLinkedin(s: FakeState): (call: PlatformCall) => Promise<Response> {
  const ctx: LinkedinCtx = { s, images: new Map(), videos: new Map(), posts: new Map() };
  return (call) => linkedin(ctx, call);
}

/** The LinkedIn versions (YYYYMM) served at `now`: the last 12 months, each kept at least a year. */
function activeLinkedinVersions(now: Date): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    out.add(`${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}`);
  }
  return out;
}

/**
 * What LinkedIn shows of a commentary in "little text": `\x` is the character x; an unescaped reserved
 * character (`\ | { } @ [ ] ( ) < > # * _ ~`) starts markup, and a text that is not valid markup is
 * kept only up to it, while the post is still answered 201
 * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/little-text-format).
 */
function littleText(commentary: string): string {
  let out = "";
  for (let i = 0; i < commentary.length; i++) {
    const c = commentary[i]!;
    if (c === "\\") {
      out += commentary[i + 1] ?? "";
      i++;
    } else if ("|{}@[]()<>#*_~".includes(c)) break;
    else out += c;
  }
  return out;
}

function unprocessable(message: string): Response {
  return json(422, { status: 422, code: "UNPROCESSABLE_ENTITY", message });
}

async function linkedin(ctx: LinkedinCtx, c: PlatformCall): Promise<Response> {
  const { req, url, parts, token } = c;
  if (parts[0] === "upload") return imageUpload(ctx, req, parts);
  if (parts[0] === "upload-video") return videoUpload(ctx, req, parts);
  if (req.method === "GET" && parts.join("/") === "v2/userinfo") {
    // OpenID userinfo (unversioned /v2): `sub` is the member id.
    const who = ctx.s.issued.get(token);
    if (!who || isExpired(ctx.s, token))
      return json(401, { status: 401, code: "EXPIRED_ACCESS_TOKEN", message: "expired" });
    return json(200, { sub: who.user, name: "Fake Member", email_verified: true });
  }
  const refused = versionRefused(req);
  if (refused) return refused;
  if (isExpired(ctx.s, token))
    return json(401, {
      status: 401,
      serviceErrorCode: 65601,
      code: "REVOKED_ACCESS_TOKEN",
      message: "The token used in the request has been revoked by the user",
    });
  const path = parts.join("/");
  const videoAnswer = await videosApi(ctx, c, path);
  if (videoAnswer) return videoAnswer;
  if (
    req.method === "POST" &&
    path === "rest/images" &&
    url.searchParams.get("action") === "initializeUpload"
  )
    return initializeImage(ctx, c);
  if (req.method === "POST" && path === "rest/posts") return createPost(ctx, req);
  if (req.method === "GET" && path === "rest/posts" && url.searchParams.get("q") === "author")
    return postsByAuthor(ctx, c);
  if (req.method === "GET" && parts[0] === "rest" && parts[1] === "socialActions" && parts[2])
    return socialActions(ctx, token, decodeURIComponent(parts[2]));
  return json(404, { status: 404, code: "NOT_FOUND", message: "Not Found" });
}

/**
 * Every versioned call carries `LinkedIn-Version: YYYYMM`; a missing one is refused, and a version
 * older than a year is sunset and answered 426
 * (https://learn.microsoft.com/en-us/linkedin/marketing/versioning).
 */
function versionRefused(req: Request): Response | null {
  const version = req.headers.get("linkedin-version");
  if (!version)
    return json(400, {
      status: 400,
      code: "VERSION_MISSING",
      message: "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
    });
  if (!activeLinkedinVersions(new Date()).has(version))
    return json(426, {
      status: 426,
      code: "NONEXISTENT_VERSION",
      message: `Requested version ${version} is not active`,
    });
  return null;
}

/**
 * A post's content is one image (`content.media.id`) or a `multiImage` of 2–20 images, each an
 * uploaded image of the author (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api,
 * .../multiimage-post-api).
 */
async function createPost(ctx: LinkedinCtx, req: Request): Promise<Response> {
  const b = (await req.json()) as {
    author?: string;
    commentary?: string;
    content?: { media?: { id?: string }; multiImage?: { images?: { id?: string }[] } };
  };
  const ids = b.content?.media?.id
    ? [b.content.media.id]
    : (b.content?.multiImage?.images ?? []).map((i) => i.id ?? "");
  if (b.content?.multiImage && (ids.length < 2 || ids.length > 20))
    return unprocessable("multiImage takes 2 to 20 images");
  const media: Fetched[] = [];
  // A video post: `content.media.id` is a video URN of the author, AVAILABLE (videos-api page).
  if (ids.length === 1 && ids[0]!.startsWith("urn:li:video:")) {
    const v = ctx.videos.get(ids[0]!);
    if (!v || v.owner !== b.author || v.status !== "AVAILABLE" || !v.bytes)
      return unprocessable(`${ids[0]} is not an available video of the author`);
    media.push(v.bytes);
    ids.length = 0;
  }
  for (const id of ids) {
    const img = ctx.images.get(id);
    if (!img || img.owner !== b.author || !img.bytes)
      return unprocessable(`${id} is not an uploaded image of the author`);
    media.push(img.bytes);
  }
  const urn = `urn:li:share:7${String(nextSeq(ctx.s)).padStart(9, "0")}`;
  ctx.s.published.set(urn, { platform: "linkedin", text: littleText(b.commentary ?? ""), media });
  const mine = ctx.posts.get(b.author ?? "") ?? [];
  mine.unshift({ id: urn, commentary: b.commentary ?? "", createdAt: now(ctx.s) });
  ctx.posts.set(b.author ?? "", mine);
  return new Response(null, { status: 201, headers: { "x-restli-id": urn } });
}

/**
 * Find Posts by Authors: `GET /rest/posts?author={URN}&q=author&count=&sortBy=` (newest first; `count`
 * 10 by default, at most 100), each post with its `commentary` as sent and `createdAt` (epoch ms). A
 * member's posts need r_member_social, restricted ("granted to select developers only")
 * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api#find-posts-by-authors);
 * without it 403 ACCESS_DENIED (decision 1497).
 */
function postsByAuthor(ctx: LinkedinCtx, c: PlatformCall): Response {
  const author = c.url.searchParams.get("author") ?? "";
  if (author.startsWith("urn:li:person:") && !hasScope(ctx.s, c.token, "r_member_social"))
    return json(403, {
      status: 403,
      serviceErrorCode: 100,
      code: "ACCESS_DENIED",
      message: "Not enough permissions to access: posts.FINDER-author.20241101",
    });
  const count = Math.min(100, Math.max(1, Number(c.url.searchParams.get("count") ?? 10) || 10));
  const elements = (ctx.posts.get(author) ?? []).slice(0, count).map((p) => ({
    id: p.id,
    author,
    commentary: p.commentary,
    createdAt: p.createdAt,
    publishedAt: p.createdAt,
    lifecycleState: "PUBLISHED",
    visibility: "PUBLIC",
  }));
  return json(200, { paging: { start: 0, count, links: [] }, elements });
}

function socialActions(ctx: LinkedinCtx, token: string, urn: string): Response {
  // socialActions needs r_member_social, a restricted scope ("granted to select developers only",
  // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/members/post-statistics).
  if (!hasScope(ctx.s, token, "r_member_social"))
    return json(403, {
      status: 403,
      serviceErrorCode: 100,
      code: "ACCESS_DENIED",
      message: "Not enough permissions to access: socialActions.GET.20241101",
    });
  const m = metricsOf(ctx.s, urn);
  return json(200, {
    likesSummary: { likedByCurrentUser: false, totalLikes: m.likes, aggregatedTotalLikes: m.likes },
    commentsSummary: { totalFirstLevelComments: m.comments, aggregatedTotalComments: m.comments },
    target: urn,
    $URN: `urn:li:socialActions:${urn}`,
  });
}
