import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { memberships, pages } from "@site/db";
import { createApiKey, createMember } from "@site/domain/core";
import { addLibraryFile } from "@site/domain/media";
import { MAX_PAGE_BYTES } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Issue 17, items 1 and 11: page media found by parsing, signed at read only for the site being read.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

let h: TestApp;
let attacker: Awaited<ReturnType<TestApp["seedOrg"]>>;
let victim: Awaited<ReturnType<TestApp["seedOrg"]>>;
/** The attacker's site and one of its files; a private file of another organization's site. */
let site: { id: string; slug: string };
let own: { key: string; url: string };
let foreign: { key: string; url: string };

const newSite = async (key: string) => {
  const slug = `sec-${uniq()}`;
  const res = await h.call("POST", "/api/v1/sites", { key, body: { name: "S", slug } });
  return { id: ((await res.json()) as Json).site.id as string, slug };
};
const addFile = (siteId: string) =>
  addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });

beforeAll(async () => {
  h = await buildTestApp();
  attacker = await h.seedOrg({ siteLimit: 100 });
  victim = await h.seedOrg({ siteLimit: 100 });
  site = await newSite(attacker.key);
  own = await addFile(site.id);
  const victimSite = await newSite(victim.key);
  foreign = await addFile(victimSite.id);
  await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: attacker.key });
});
afterAll(() => h.close());

const block = (src: string) =>
  `<Column fillWidth>\n  <Column fillWidth>\n    <Media data-visual-block="image" src="${src}" alt="x" />\n  </Column>\n</Column>`;
const write = async (content: string) => {
  const res = await h.call("POST", `/api/v1/sites/${site.id}/pages`, {
    key: attacker.key,
    body: { path: `/p-${uniq()}`, title: "T", content },
  });
  return { status: res.status, body: (await res.json()) as Json };
};
/** A refused write: 400 VALIDATION_ERROR, nothing stored. */
const expectRefused = async (content: string) => {
  const r = await write(content);
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe("VALIDATION_ERROR");
  expect(await h.db.select({ id: pages.id }).from(pages).where(eq(pages.content, content))).toEqual([]);
  return r.body.error;
};
/** Every grant minted anywhere in a text, for `key`. */
const grantedFor = (text: string, key: string) => text.includes(`${key}?k=`);

describe("page writes find media references by parsing (item 1)", () => {
  test("the exploit: an own file whose query carries a foreign path, and a bare copy on the same line", async () => {
    const err = await expectRefused(`<Media src="${own.url}?x=${foreign.url}" alt="" /> ![](${foreign.url})`);
    const messages = err.details.map((d: Json) => d.message as string);
    expect(messages.some((m: string) => m.startsWith("carries another media path"))).toBe(true);
    expect(err.details.some((d: Json) => d.ref === foreign.url && d.message.startsWith("unknown file"))).toBe(
      true,
    );
  });

  test("an <img srcset> with a foreign candidate", async () => {
    await expectRefused(
      `<img src="${own.url}?x=${foreign.url}" srcSet="${own.url} 1x, ${foreign.url} 2x" alt="" />`,
    );
  });

  test("a reference split over lines, as the browser joins it", async () => {
    const [head, tail] = [foreign.url.slice(0, 5), foreign.url.slice(5)];
    await expectRefused(`<Media\n  alt="x"\n  src="${head}\n${tail}"\n/>`);
    await expectRefused(`<img\n  alt="x"\n  src="${head}\n${tail}" />`);
    // The same layout with an own file is a valid reference.
    expect(
      (await write(`<Media\n  alt="x"\n  src="${own.url.slice(0, 5)}\n${own.url.slice(5)}"\n/>`)).status,
    ).toBe(201);
  });

  test("an HTML <img> inside MDX, its path written with character references", async () => {
    await expectRefused(`Intro <img src="${foreign.url.replaceAll("/", "&#x2F;")}" alt="" /> end.`);
  });

  test("a Markdown image after another whose query names the same path, on one line", async () => {
    await expectRefused(`![a](${own.url}?v=${foreign.url}) ![x](${foreign.url})`);
  });

  test("a link reference definition, written with character references", async () => {
    await expectRefused(`![x][pic]\n\n[pic]: ${foreign.url.replaceAll("/", "&#47;")}\n`);
  });

  test("a media path outside any URL (an expression) is refused: it would never be signed", async () => {
    const err = await expectRefused(`<Media src={"/api/media/" + "${own.key}"} alt="" />`);
    expect(err.details[0].message).toContain("never signed");
  });

  test("content that is not MDX is 400 naming line and column", async () => {
    const err = await expectRefused("# Title\n\nText <!-- a comment -->\n");
    expect(err.message).toContain("line 3, column");
    expect(err.details[0]).toMatchObject({ field: "content", line: 3 });
  });

  test(`pages over ${MAX_PAGE_BYTES} bytes are 400 VALIDATION_ERROR naming content`, async () => {
    // Multi-byte characters: the cap is on UTF-8 bytes.
    const err = await expectRefused(`# Big\n\n${"é".repeat(MAX_PAGE_BYTES / 2)}`);
    expect(JSON.stringify(err)).toContain("content");
    expect((await write(`# Fits\n\n${"a".repeat(MAX_PAGE_BYTES - 10)}`)).status).toBe(201);
  });
});

describe("signing at read is independent of the write check (item 1)", () => {
  /** A page row written straight to the database, past every write check. */
  const planted = () =>
    [
      block(own.url),
      block(foreign.url),
      `<img srcset="${own.url} 1x, ${foreign.url} 2x" alt="" />`,
      `![x](${foreign.url})`,
      `<Media src="${own.url}?x=${foreign.url}" /> ${foreign.url}`,
      `<Media src="${foreign.url.slice(0, 5)}\n${foreign.url.slice(5)}" />`,
      `![y][f]\n\n[f]: ${foreign.url}`,
    ].join("\n\n");

  test("a public read signs own files and leaves every foreign reference unsigned", async () => {
    const [row] = await h.db
      .insert(pages)
      // Positions are unique per site (decision 0606).
      .values({ siteId: site.id, path: `/planted-${uniq()}`, title: "P", content: planted(), position: 100 })
      .returning({ id: pages.id });
    for (const path of [
      `/api/v1/public/sites/${site.slug}/pages/${row!.id}`,
      `/api/v1/public/sites/${site.slug}/pages`,
    ]) {
      const res = await h.call("GET", path);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(grantedFor(text, foreign.key)).toBe(false);
      expect(grantedFor(text, own.key)).toBe(true);
    }
    const one = (
      (await (await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/${row!.id}`)).json()) as Json
    ).page.content as string;
    // The foreign file is still named, bare: without a grant the delivery route refuses it.
    expect(one).toContain(foreign.url);
    const signedOwn = /src="([^"]+\?k=[^"]+)"/.exec(one)![1]!;
    const u = new URL(signedOwn);
    expect((await h.call("GET", `${u.pathname}${u.search}`)).status).toBe(200);
    expect((await h.call("GET", foreign.url)).status).toBe(403);
  });

  test("a member read signs own files with member grants and reports the foreign ones unsigned", async () => {
    const [row] = await h.db
      .insert(pages)
      // Positions are unique per site (decision 0606).
      .values({ siteId: site.id, path: `/planted-${uniq()}`, title: "P", content: planted(), position: 101 })
      .returning({ id: pages.id });
    const one = (await (
      await h.call("GET", `/api/v1/sites/${site.id}/pages/${row!.id}`, { key: attacker.key })
    ).json()) as Json;
    expect(one.page.content).toBe(planted());
    expect(grantedFor(one.page.displayContent, foreign.key)).toBe(false);
    expect(grantedFor(one.page.displayContent, own.key)).toBe(true);
    const reported = one.page.unsignedMedia.map((u: Json) => u.ref).join("\n");
    expect(reported).toContain(foreign.url);
    const list = await h.call("GET", `/api/v1/sites/${site.id}/pages`, { key: attacker.key });
    expect(grantedFor(await list.text(), foreign.key)).toBe(false);
  });

  test("a page that does not parse is withheld from readers: nothing signed, nothing served", async () => {
    const content = `<!-- x --> ${block(own.url)}`;
    const [row] = await h.db
      .insert(pages)
      .values({ siteId: site.id, path: `/broken-${uniq()}`, title: "B", content, position: 102 })
      .returning({ id: pages.id });
    const res = await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/${row!.id}`);
    expect(((await res.json()) as Json).page.content).toBe("");
    const member = (await (
      await h.call("GET", `/api/v1/sites/${site.id}/pages/${row!.id}`, { key: attacker.key })
    ).json()) as Json;
    expect(member.page.content).toBe(content);
    expect(member.page.displayContent).toBe("");
    expect(member.page.displayNotes[0]).toContain("not valid MDX at line 1");
  });
});

describe("what leaves for readers is sanitized (decision 0312)", () => {
  test("scripts, expressions, ESM, handlers and script URLs are stored as written but never served", async () => {
    const content = [
      'export const leak = "x"',
      "",
      "# Hello {globalThis.process}",
      "",
      "<script>alert(1)</script>",
      "",
      `<a href="java&#x0A;script:alert(1)" onClick="steal()">click</a> [x](javascript:alert(2))`,
      "",
      block(own.url),
    ].join("\n");
    const created = await write(content);
    expect(created.status).toBe(201);
    const id = created.body.page.id;
    expect(created.body.page.content).toBe(content);
    const pub = (await (await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/${id}`)).json()) as Json;
    const member = (await (
      await h.call("GET", `/api/v1/sites/${site.id}/pages/${id}`, { key: attacker.key })
    ).json()) as Json;
    for (const out of [pub.page.content as string, member.page.displayContent as string]) {
      expect(out).not.toContain("<script");
      expect(out).not.toContain("export const");
      expect(out).not.toContain("globalThis");
      expect(out).not.toContain("onClick");
      expect(out.toLowerCase()).not.toContain("script:");
      expect(out).toContain(`${own.url}?k=`);
      expect(out).toContain("alert(1)"); // the script's text, as text
    }
    expect(member.page.content).toBe(content);
    expect(member.page.displayNotes[0]).toContain("removed for readers");
  });
});

describe("member page reads sign media with member grants (item 11)", () => {
  test("list and get carry displayContent whose grants open the files; content stays canonical", async () => {
    const created = await write(`# Hi\n\n${block(own.url)}\n\n![inline](${own.url})`);
    expect(created.status).toBe(201);
    const id = created.body.page.id;
    const one = (await (
      await h.call("GET", `/api/v1/sites/${site.id}/pages/${id}`, { key: attacker.key })
    ).json()) as Json;
    expect(one.page.content).not.toContain("?k=");
    expect(one.page.unsignedMedia).toEqual([]);
    const urls = [...one.page.displayContent.matchAll(/\/api\/media\/[^")\s]+\?k=m\.[^")\s]+/g)].map(
      (m) => m[0],
    );
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const res = await h.call("GET", url);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toStartWith("private");
    }
    const list = (await (
      await h.call("GET", `/api/v1/sites/${site.id}/pages`, { key: attacker.key })
    ).json()) as Json;
    const listed = list.pages.find((p: Json) => p.id === id);
    expect(listed.displayContent).toContain(`${own.url}?k=m.`);
    // What a dashboard sends back is the stored content, which a write accepts as it is.
    const back = await h.call("PATCH", `/api/v1/sites/${site.id}/pages/${id}`, {
      key: attacker.key,
      body: { content: one.page.content },
    });
    expect(back.status).toBe(200);
  });
});

describe("roles cap what a key may do (decision 0313)", () => {
  test("a viewer's key with content:write reads pages but cannot write them", async () => {
    const owner = await h.seedOrg({ siteLimit: 10 });
    const user = await createMember(h.ctx, {
      orgId: owner.org.id,
      email: `v-${uniq()}@example.test`,
      role: "viewer",
    });
    const { key } = await createApiKey(h.ctx, {
      orgId: owner.org.id,
      userId: user.id,
      scopes: ["content:read", "content:write"],
    });
    const theirSite = await newSite(owner.key);
    expect((await h.call("GET", `/api/v1/sites/${theirSite.id}/pages`, { key })).status).toBe(200);
    const res = await h.call("POST", `/api/v1/sites/${theirSite.id}/pages`, {
      key,
      body: { path: "/v", title: "V", content: "# v" },
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe("FORBIDDEN");
    expect(body.error.message).toContain("viewer");
  });

  test("a key whose creator left the organization does nothing", async () => {
    const member = await h.seedOrg({ siteLimit: 10 });
    const s = await newSite(member.key);
    expect((await h.call("GET", `/api/v1/sites/${s.id}/pages`, { key: member.key })).status).toBe(200);
    await h.db.delete(memberships).where(eq(memberships.userId, member.user.id));
    // The memberships trigger tells every key cache at commit; wait until this process heard it.
    await h.ctx.keys?.heard(`member:${member.org.id}:${member.user.id}`, 2000);
    const res = await h.call("GET", `/api/v1/sites/${s.id}/pages`, { key: member.key });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error.message).toContain("no longer a member");
  });
});
