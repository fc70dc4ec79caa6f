import { and, desc, eq, gt, lt, or, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import { AppError } from "./errors.ts";

/** A keyset position: the row's microsecond timestamp (as PostgreSQL text) and its id. */
export type Keyset = { at: string; id: string };

/** Encodes a keyset position as an opaque cursor. */
export function encodeCursor(k: Keyset): string {
  return Buffer.from(JSON.stringify([k.at, k.id])).toString("base64url");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PG_TS = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)$/;

/** Decodes a cursor; 400 VALIDATION_ERROR when it is not one this service issued. */
export function decodeCursor(cursor: string): Keyset {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof at === "string" && typeof id === "string" && PG_TS.test(at) && UUID.test(id))
      return { at, id };
  } catch {
    // fall through to the error below
  }
  throw new AppError("VALIDATION_ERROR", "cursor: not a cursor returned by this API", [
    { field: "cursor", message: "invalid cursor" },
  ]);
}

/** The keyset condition "after `cursor`" in newest-first order on (createdAt, id); undefined without one. */
export function olderThan(createdAt: PgColumn, id: PgColumn, cursor: string | undefined): SQL | undefined {
  if (!cursor) return undefined;
  const after = decodeCursor(cursor);
  const at = sql`${after.at}::timestamptz`;
  return or(lt(createdAt, at), and(eq(createdAt, at), lt(id, after.id)));
}

/** Newest first, ties broken by id: the order every keyset listing uses. */
export function newestFirst(createdAt: PgColumn, id: PgColumn): SQL[] {
  return [desc(createdAt), desc(id)];
}

/**
 * Splits `limit + 1` fetched rows into the page and the cursor of the next one (null on the last page).
 * `encode` turns the last row's key into the cursor: a time keyset by default, a position for ordered
 * listings (encodePositionCursor).
 */
export function keysetPage<T, K = Keyset>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => K,
  encode: (key: K) => string = encodeCursor as unknown as (key: K) => string,
): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: rows.length > limit && last ? encode(keyOf(last)) : null };
}

/** Encodes a position in an ordered listing (collection items) as an opaque cursor. */
export function encodePositionCursor(position: number): string {
  return Buffer.from(JSON.stringify(["p", position])).toString("base64url");
}

/** The keyset condition "after `cursor`" in position order; undefined without one, 400 when not ours. */
export function afterPosition(position: PgColumn, cursor: string | undefined): SQL | undefined {
  if (!cursor) return undefined;
  try {
    const [tag, at] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (tag === "p" && Number.isSafeInteger(at) && (at as number) >= 0) return gt(position, at as number);
  } catch {
    // fall through to the error below
  }
  throw new AppError("VALIDATION_ERROR", "cursor: not a cursor returned by this API", [
    { field: "cursor", message: "invalid cursor" },
  ]);
}

/**
 * `olderThan` for hand-written SQL on hot paths: ` and (created_at, id) before the cursor`, or nothing
 * without one. `createdAt` and `id` name the columns (with their table alias).
 */
export function andOlderThan(createdAt: SQL, id: SQL, cursor: string | undefined): SQL {
  if (!cursor) return sql``;
  const after = decodeCursor(cursor);
  return sql` and (${createdAt} < ${after.at}::timestamptz or (${createdAt} = ${after.at}::timestamptz and ${id} < ${after.id}::uuid))`;
}
