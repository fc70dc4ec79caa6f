import { expect } from "bun:test";
import type { FakePlatforms } from "@site/social/testing";
import type { TestApp } from "./mod.ts";

/**
 * Uploads bytes into the organization's social library through the app (a signed upload, then the PUT
 * to the local-disk store's own route, which lands it); answers the file's entry.
 */
export async function uploadSocialMedia(h: TestApp, key: string, bytes: Uint8Array, contentType: string) {
  const res = await h.call("POST", "/api/v1/social/media/upload", {
    key,
    body: { contentType, size: bytes.byteLength },
  });
  expect(res.status).toBe(201);
  const p = (await res.json()) as any;
  const u = new URL(p.upload.url);
  const put = await h.app.handle(
    new Request(`http://localhost${u.pathname}${u.search}`, {
      method: "PUT",
      headers: p.upload.headers,
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    }),
  );
  expect(put.status).toBe(200);
  return p.media as { id: string; url: string; size: number } & Record<string, unknown>;
}

/** The fake platforms fetch the files of posts (share-token URLs on PUBLIC_BASE_URL) from the app itself. */
export function fetchMediaFromApp(fake: FakePlatforms, h: TestApp): void {
  const base = h.ctx.config.publicBaseUrl;
  fake.setMediaFetcher(async (url) =>
    url.startsWith(base)
      ? h.app.handle(new Request(`http://localhost${url.slice(base.length)}`))
      : fetch(url),
  );
}

/**
 * Connects a social account (random ids and token) through the app; answers its entry. `extra` adds
 * or overrides body fields (an X tier, a token the strict fakes treat specially).
 */
export async function connectSocialAccount(
  h: TestApp,
  key: string,
  platform: string,
  extra: Record<string, unknown> = {},
) {
  const res = await h.call("POST", "/api/v1/social/accounts", {
    key,
    body: {
      platform,
      accountId: `${platform}-${Math.random().toString(36).slice(2, 8)}`,
      accessToken: `tok-${platform}-${Math.random()}`,
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { account: { id: string } & Record<string, any> }).account;
}
