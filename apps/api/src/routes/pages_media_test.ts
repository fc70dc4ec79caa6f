import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pages } from "@site/db";
import { addLibraryFile, grantMemberUrl } from "@site/domain/media";
import { upsertTemplate } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

const newSite = async (template?: string) => {
  const res = await h.call("POST", "/api/v1/sites", {
    key: owner.key,
    body: { name: "S", slug: `p-${uniq()}`, ...(template ? { template } : {}) },
  });
  return ((await res.json()) as Json).site.id as string;
};
const addFile = (siteId: string) =>
  addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
const block = (src: string) =>
  `<Column fillWidth paddingTop="32" paddingBottom="32">\n  <Column fillWidth>\n    <Media data-visual-block="image" src="${src}" alt="x" aspectRatio="16 / 9" radius="m" />\n  </Column>\n</Column>`;
const writePage = async (siteId: string, content: string) => {
  const res = await h.call("POST", `/api/v1/sites/${siteId}/pages`, {
    key: owner.key,
    body: { path: `/p-${uniq()}`, title: "T", content },
  });
  return { status: res.status, body: (await res.json()) as Json };
};

describe("pages reference real library files", () => {
  test("a nested Column > Column > Media naming a library url is accepted without warnings", async () => {
    const siteId = await newSite();
    const file = await addFile(siteId);
    const r = await writePage(siteId, `# Hi\n\n${block(file.url)}`);
    expect(r.status).toBe(201);
    expect(r.body.warnings).toEqual([]);
  });

  test("unknown files, displayUrls with grants and outside URLs are refused, each listed with why", async () => {
    const siteId = await newSite();
    const other = await newSite();
    const mine = await addFile(siteId);
    const theirs = await addFile(other);
    const displayUrl = grantMemberUrl(h.ctx, siteId, mine.key);
    const content = [
      block(`/api/media/site-media/${siteId}/invented.png`),
      block(displayUrl),
      block("https://images.example.com/stock.jpg"),
      block(theirs.url),
      `![inline](/api/media/site-media/${siteId}/nope.webp)`,
    ].join("\n\n");
    const r = await writePage(siteId, content);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    const reasons = r.body.error.details.map((d: Json) => [d.ref, d.message.split(":")[0]]);
    expect(reasons).toEqual([
      [`/api/media/site-media/${siteId}/invented.png`, "unknown file"],
      [displayUrl, "a displayUrl with a grant"],
      ["https://images.example.com/stock.jpg", "outside URL"],
      [theirs.url, "unknown file"],
      [`/api/media/site-media/${siteId}/nope.webp`, "unknown file"],
    ]);
    expect(await h.db.select().from(pages).where(eq(pages.content, content))).toEqual([]);
  });

  test("the same rule holds on update (PATCH)", async () => {
    const siteId = await newSite();
    const file = await addFile(siteId);
    const created = await writePage(siteId, block(file.url));
    const res = await h.call("PATCH", `/api/v1/sites/${siteId}/pages/${created.body.page.id}`, {
      key: owner.key,
      body: { content: block(`/api/media/site-media/${siteId}/ghost.png`) },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.code).toBe("VALIDATION_ERROR");
  });

  test("a bare Media is accepted with a warning that the visual editor cannot edit it", async () => {
    const siteId = await newSite();
    const file = await addFile(siteId);
    const r = await writePage(
      siteId,
      `Intro\n\n<Media src="${file.url}" alt="bare" />\n\n<Column><Media src="${file.url}" /></Column>`,
    );
    expect(r.status).toBe(201);
    expect(r.body.warnings).toHaveLength(2);
    expect(r.body.warnings[0]).toContain("visual editor");
  });

  test("a clone may reference the host files its copied content carried, and no other file of the host", async () => {
    const hostId = await newSite();
    const hostFile = await addFile(hostId);
    const uncarried = await addFile(hostId);
    expect((await writePage(hostId, block(hostFile.url))).status).toBe(201);
    const slug = `tpl-${uniq()}`;
    await upsertTemplate(h.ctx, { slug, siteId: hostId, name: "T", status: "approved" });
    const cloneId = await newSite(slug);
    expect((await writePage(cloneId, block(hostFile.url))).status).toBe(201);
    const refused = await writePage(cloneId, block(uncarried.url));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].ref).toBe(uncarried.url);
    const stranger = await newSite();
    expect((await writePage(stranger, block(hostFile.url))).status).toBe(400);
  });
});
