import type { EntityRef } from "./entity-refs";

const ROLE_PREFIX = /^(source|target|destination|new|parent|from|to)(?=[A-Z])/;
const TYPE_ALIASES: Record<string, string> = { item: "checklist_item", rating: "rating", plan: "day_plan" };

/**
 * The entities a tool call names, read from its validated arguments: every top-level `…Id` string
 * and `…Ids` string array (`sourceTaskId` → task, `itemIds` → checklist_item). Deterministic, so the
 * same call always yields the same `targetRefs` and hence the same actionStableId.
 */
export function targetRefsFromArgs(args: Record<string, unknown>): EntityRef[] {
  const refs: EntityRef[] = [];
  for (const [key, value] of Object.entries(args)) {
    const match = /^(.+?)Ids?$/.exec(key);
    if (!match) continue;
    const type = entityType(match[1]!);
    const ids = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
    for (const id of ids) if (id.length > 0 && id.length <= 256) refs.push({ type, id });
  }
  return refs;
}

function entityType(stem: string): string {
  const bare = stem.replace(ROLE_PREFIX, "");
  const snake = (bare.charAt(0).toLowerCase() + bare.slice(1)).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return (TYPE_ALIASES[snake] ?? snake).replace(/[^a-z0-9_]/g, "_").slice(0, 32) || "entity";
}
