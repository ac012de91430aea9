/**
 * A subscription observation as a person reads it: the changed entities by their titles and their
 * category by its name (`Task “Run 5k” changed in “Demo”`), never by internal ids. The model keeps the
 * summary with ids (wake-observation.ts); this line is for people (the message's `metadata.title`),
 * built from the same projected data, so nothing withheld from the agent is shown to them either.
 */
import type { ProjectedEntity } from "./wake-observation";

const SHOWN = 3;

type Data = { entities?: unknown; trigger?: { matchedEntityIds?: unknown } };

export function observationTitle(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  const { entities, trigger } = data as Data;
  if (!Array.isArray(entities) || entities.length === 0) return null;
  const all = entities.filter(
    (entity): entity is ProjectedEntity => typeof entity === "object" && entity !== null && "id" in entity,
  );
  const matched = Array.isArray(trigger?.matchedEntityIds) ? new Set(trigger.matchedEntityIds) : new Set<unknown>();
  const named = matched.size ? all.filter((entity) => matched.has(entity.id)) : all;
  if (named.length === 0) return null;
  const lines = named.slice(0, SHOWN).map((entity) => describe(entity, all));
  const more = named.length - lines.length;
  return `${lines.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

function describe(entity: ProjectedEntity, all: ProjectedEntity[]): string {
  const type = typeWord(entity.type);
  if ("withheld" in entity) return `A ${entity.type} outside this agent's categories changed`;
  if ("kind" in entity && entity.type === "agent") return `Agent “${entity.displayName}” changed`;
  if (!("fields" in entity)) return `${type} changed`;
  const name = nameOf(entity.fields);
  const category = entity.categoryId === null ? undefined : all.find((other) => other.id === entity.categoryId);
  const categoryName = category && "fields" in category ? nameOf(category.fields) : null;
  const where = categoryName && entity.type !== "category" ? ` in “${categoryName}”` : "";
  return `${type}${name ? ` “${name}”` : ""} ${entity.deleted ? "deleted" : "changed"}${where}`;
}

function nameOf(fields: Record<string, unknown>): string | null {
  for (const key of ["title", "name", "label"]) {
    const value = fields[key];
    if (typeof value === "string" && value.trim()) return value.length > 80 ? `${value.slice(0, 79)}…` : value;
  }
  return null;
}

/** `checklistItem` → "Checklist item". */
function typeWord(type: string): string {
  const words = type
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : type;
}
