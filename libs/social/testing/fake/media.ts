/** The fake's media hosting: files a test serves at /media/<id> for the platforms to fetch. */
import { type FakeState, nextSeq } from "./state.ts";

/** The address prefix of hosted files below the fake's base URL. */
export const MEDIA_PATH = "/media/";

/** Serves `bytes` at a URL of the fake (`base` its address) and returns that URL. */
export function hostMedia(
  s: FakeState,
  base: string,
  file: { bytes: Uint8Array; contentType: string },
): string {
  const id = `${nextSeq(s)}`;
  s.hosted.set(id, file);
  return `${base}${MEDIA_PATH}${id}`;
}

/** The hosted file at `url` (a path under MEDIA_PATH), or 404. */
export function serveMedia(s: FakeState, url: URL): Response {
  const file = s.hosted.get(url.pathname.slice(MEDIA_PATH.length));
  return file
    ? new Response(file.bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": file.contentType } })
    : new Response("not found", { status: 404 });
}
