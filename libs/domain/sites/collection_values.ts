import { mediaRefsInText, plainTextProblem } from "@site/domain/content";
import type { Context } from "@site/domain/core";
import { mediaRefBases } from "@site/domain/media";
import type { Problem } from "./_input.ts";
import type { CollectionField } from "./collection_model.ts";
import { type PageIndex, parseHref, readHref, storeHref } from "./links.ts";
import { type MediaRefInput, storableMediaRefs } from "./site_media.ts";

/** The longest text and richtext values. */
export const MAX_TEXT = 5_000;
export const MAX_RICHTEXT = 100_000;
/** The most media paths the text, richtext and link values of one item may hold (each is looked up). */
export const MAX_TEXT_MEDIA_REFS = 1_000;

/** Stored item values: scalars by field key (media as bare paths, links as page references). */
export type StoredValues = Record<string, string | number | boolean>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})$/;

function isRealDate(value: string): boolean {
  if (DATE.test(value)) {
    const d = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value);
  }
  return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/** Why a value does not fit its field (before media and links are looked up), or null. */
function valueProblem(field: CollectionField, value: unknown): string | null {
  switch (field.type) {
    case "text":
      if (typeof value !== "string") return "a string (plain text)";
      if (value.length > MAX_TEXT) return `at most ${MAX_TEXT} characters`;
      return plainTextProblem(value);
    case "richtext":
      if (typeof value !== "string") return "a string (Markdown)";
      return value.length > MAX_RICHTEXT ? `at most ${MAX_RICHTEXT} characters` : null;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "a finite number";
    case "boolean":
      return typeof value === "boolean" ? null : "true or false";
    case "date":
      return typeof value === "string" && isRealDate(value)
        ? null
        : "a date: YYYY-MM-DD, or ISO 8601 date and time with Z or an offset";
    case "image":
      return typeof value === "string" ? null : "the url (/api/media/<key>) of a file of this site's library";
    case "link": {
      if (typeof value !== "string") return "a site path (/about), a page reference (page:<id>) or a URL";
      const parsed = parseHref(value);
      return parsed.kind === "invalid" ? parsed.reason : null;
    }
  }
}

/**
 * Checks item values against a collection's fields and turns them into their stored form. `merged` is
 * the whole item after the write (for a PATCH: the old values with the new ones over them, nulls
 * removing); only the keys in `written` are checked again. Each wrong value, unknown key and missing
 * required field is a problem naming `values.<key>`.
 */
export async function storableValues(
  ctx: Context,
  input: { siteId: string; fields: CollectionField[]; index: PageIndex; prefix?: string },
  merged: Record<string, unknown>,
  written: Record<string, unknown>,
): Promise<{ values: StoredValues; problems: Problem[] }> {
  const at = (key: string) => `${input.prefix ?? ""}values.${key}`;
  const byKey = new Map(input.fields.map((f) => [f.key, f]));
  const problems: Problem[] = [];
  const values: StoredValues = {};
  const images: { field: string; ref: string; key: string }[] = [];
  const inText: MediaRefInput[] = [];
  const bases = mediaRefBases(ctx.config);
  for (const [key, value] of Object.entries(merged)) {
    const field = byKey.get(key);
    if (!field) {
      problems.push({ field: at(key), message: "no such field in this collection" });
      continue;
    }
    if (value === null || value === undefined) continue;
    if (!(key in written)) {
      values[key] = value as string | number | boolean;
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem) {
      problems.push({ field: at(key), type: field.type, message: `${field.type}: ${problem}` });
      continue;
    }
    if (field.type === "image") images.push({ field: at(key), ref: value as string, key });
    else if (field.type === "link") values[key] = storeHref(value as string, input.index);
    else values[key] = value as string | number | boolean;
    // A media path written in text, Markdown or a link is held to the library rule too (decision 0611).
    if (field.type === "text" || field.type === "richtext" || field.type === "link")
      for (const ref of mediaRefsInText(bases, value as string)) inText.push({ field: at(key), ref });
  }
  for (const field of input.fields) {
    if (field.required && (merged[field.key] === null || merged[field.key] === undefined))
      problems.push({ field: at(field.key), type: field.type, message: "required" });
  }
  if (inText.length > 0) {
    if (inText.length > MAX_TEXT_MEDIA_REFS)
      problems.push({
        field: inText[0]!.field,
        message: `at most ${MAX_TEXT_MEDIA_REFS} media paths in the text values of one item`,
      });
    else problems.push(...(await storableMediaRefs(ctx, input.siteId, inText)).problems);
  }
  if (images.length > 0) {
    const media = await storableMediaRefs(ctx, input.siteId, images);
    problems.push(...media.problems);
    for (const img of images) {
      const stored = media.stored.get(img.ref);
      if (stored) values[img.key] = stored;
    }
  }
  return { values, problems };
}

/** Item values as read: image values signed, link values translated to current paths. */
export function readValues(
  stored: StoredValues,
  fields: CollectionField[],
  index: PageIndex | null,
  sign: (path: string) => string,
): StoredValues {
  const out: StoredValues = {};
  const types = new Map(fields.map((f) => [f.key, f.type]));
  for (const [key, value] of Object.entries(stored)) {
    const type = types.get(key);
    if (type === "image" && typeof value === "string") out[key] = sign(value);
    else if (type === "link" && typeof value === "string" && index) out[key] = readHref(value, index);
    else out[key] = value;
  }
  return out;
}
