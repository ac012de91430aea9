/**
 * Typed references to the entities a tool reads or changes (seed 000 §4.4 "resolved target refs",
 * §4.5 `AgentLink` `tool_effect`). A ref's key is `"type:id"`; a type is lowercase snake_case and can
 * never contain `:`, so the first `:` splits a key back into its ref and the key is injective.
 */
import { z } from "zod";
import { compareStrings } from "../wakes/tokens";

/** `task`, `checklist_item`, `memory_slot`, … — never a `:`. */
export const ENTITY_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
export const ENTITY_ID_MAX_LENGTH = 256;

export const entityRefSchema = z.strictObject({
  type: z.string().regex(ENTITY_TYPE_PATTERN, "type must be lowercase snake_case (a-z, 0-9, _), at most 32 characters"),
  id: z.string().min(1, "id must not be empty").max(ENTITY_ID_MAX_LENGTH, `id must be at most ${ENTITY_ID_MAX_LENGTH} characters`),
});
export type EntityRef = z.infer<typeof entityRefSchema>;

/** `"type:id"`. */
export function entityRefKey(ref: EntityRef): string {
  return `${ref.type}:${ref.id}`;
}

/** The inverse of `entityRefKey`; null for anything `entityRefKey` cannot produce. */
export function parseEntityRefKey(key: string): EntityRef | null {
  const colon = key.indexOf(":");
  if (colon < 0) return null;
  const parsed = entityRefSchema.safeParse({ type: key.slice(0, colon), id: key.slice(colon + 1) });
  return parsed.success ? parsed.data : null;
}

/** Keys of `refs`, deduplicated and in code-unit order: the canonical form of a ref set. */
export function sortedUniqueRefKeys(refs: Iterable<EntityRef>): string[] {
  return [...new Set([...refs].map(entityRefKey))].sort(compareStrings);
}

/** `refs` deduplicated and ordered by key. */
export function normalizeRefs(refs: Iterable<EntityRef>): EntityRef[] {
  const byKey = new Map<string, EntityRef>();
  for (const ref of refs) byKey.set(entityRefKey(ref), { type: ref.type, id: ref.id });
  return [...byKey.keys()].sort(compareStrings).map((key) => byKey.get(key) as EntityRef);
}
