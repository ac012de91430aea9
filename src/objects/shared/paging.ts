import { z } from "zod";
import { failure, type Failure, type Result } from "../../core/runtime/result";
import { decodeCursor, encodeCursor, type Page } from "../../schema/common";

/** The keyset most lists page by: a sort value (usually createdAt) and the row id as tie-break. */
export const textKeyCursor = z.object({ c: z.string(), i: z.string() });
export const numberKeyCursor = z.object({ c: z.number().int(), i: z.string() });

/** What a store's page read answers: the rows, and the keyset position of the last one (null: no more). */
export interface Slice<T> {
  data: T[];
  last: unknown;
}

/**
 * A list answer `{data, nextCursor}`: the opaque cursor is decoded first (a malformed one fails
 * validation before anything is read), the store reads from that position, and the last row's
 * position becomes the next cursor.
 */
export function cursorPage<C, T>(cursor: string | undefined, shape: z.ZodType<C>, read: (position: C | undefined) => Slice<T> | Failure | ({ ok: true } & Slice<T>)): Result<Page<T>> {
  const position = decodeCursor(cursor, shape);
  if (cursor && !position) return failure("validation_failed", "cursor is not valid");
  const slice = read(position);
  if ("ok" in slice && !slice.ok) return slice;
  const { data, last } = slice as Slice<T>;
  return { ok: true, data, nextCursor: last ? encodeCursor(last) : null };
}
