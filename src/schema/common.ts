import { z } from "@hono/zod-openapi";
import { config } from "../config";

export const IsoTimestamp = z.string().datetime({ offset: true }).openapi({ example: "2026-11-25T12:00:00.000Z" });

export const PaginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(config.pagination.maxLimit).default(config.pagination.defaultLimit),
  cursor: z.string().max(512).optional(),
});
export type PaginationQuery = z.infer<typeof PaginationQuery>;

export const page = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.string().nullable() });

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    /** `cursor_expired` only: the oldest event seq still kept. */
    oldestSeq: z.number().int().optional(),
  })
  .openapi("Problem");

/** Identifier path params: short, URL-safe, no separators that could address another object. */
export const ResourceId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "must be 1-64 characters of A-Z a-z 0-9 _ -");

export const AgentIdParam = z.object({ id: ResourceId.openapi({ param: { name: "id", in: "path" } }) });

/** Opaque cursors are base64url JSON so clients cannot depend on their shape. */
export function encodeCursor(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor<T>(cursor: string | undefined, shape: z.ZodType<T>): T | undefined {
  if (!cursor) return undefined;
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const parsed = shape.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
