/**
 * What a subscription wake tells the agent (after the NEED_TO_KNOW projection): a one-line `summary` and structured `data` = the batch's tokens, the changed
 * entities projected for this agent, and the external payload if any.
 *
 * Projection is deny-by-default on category scope (seed 000: `allowedCategoryIds` is a strict
 * allow-list): a journal entity is shown only when its category (a category's own id) is in the
 * agent's `allowedCategoryIds`; otherwise only its id and type are shown, marked withheld. Agent
 * entities show their public directory fields only. The predicate itself was evaluated on the
 * full record inside the tenant; the agent learns that it matched, not what it could not see.
 */
import type { TypedToken } from "./tokens";

/** A changed entity as the shell fetched it (journal row or agent directory entry). */
export type FetchedEntity =
  | {
      kind: "journal";
      id: string;
      type: string;
      categoryId: string | null;
      parentId: string | null;
      version: number;
      updatedAt: string;
      deletedAt: string | null;
      data: Record<string, unknown>;
    }
  | { kind: "agent"; id: string; agentKind: string; displayName: string; lifecycle: string };

export type ProjectedEntity =
  | { id: string; type: string; categoryId: string | null; parentId: string | null; version: number; updatedAt: string; deleted: boolean; fields: Record<string, unknown> }
  | { id: string; type: "agent"; kind: string; displayName: string; lifecycle: string }
  | { id: string; type: string; withheld: "out_of_scope" };

export interface ObservationInput {
  tokens: ReadonlyArray<TypedToken>;
  entities: ReadonlyArray<FetchedEntity>;
  allowedCategoryIds: ReadonlyArray<string>;
  /** `journal`, `event:<source>`, `webhook:<id>`, `agent:<id>`. */
  source: string;
  origin: string;
  payload?: unknown;
  trigger: { subscriptionId: string; logicalChangeKey: string; matchedTokenKeys: string[]; matchedEntityIds: string[] };
}

export interface SubscriptionObservation {
  summary: string;
  data: {
    trigger: ObservationInput["trigger"] & { source: string; origin: string };
    tokens: TypedToken[];
    entities: ProjectedEntity[];
    payload?: unknown;
  };
}

export const OBSERVATION_LIMITS = { summaryEntities: 5, summaryMaxLength: 500 } as const;

/** Whether the agent's category scope admits this journal entity. */
export function inCategoryScope(entity: Extract<FetchedEntity, { kind: "journal" }>, allowedCategoryIds: ReadonlyArray<string>): boolean {
  const category = entity.type === "category" ? entity.id : entity.categoryId;
  return category !== null && allowedCategoryIds.includes(category);
}

export function projectEntity(entity: FetchedEntity, allowedCategoryIds: ReadonlyArray<string>): ProjectedEntity {
  if (entity.kind === "agent") return { id: entity.id, type: "agent", kind: entity.agentKind, displayName: entity.displayName, lifecycle: entity.lifecycle };
  if (!inCategoryScope(entity, allowedCategoryIds)) return { id: entity.id, type: entity.type, withheld: "out_of_scope" };
  return {
    id: entity.id,
    type: entity.type,
    categoryId: entity.categoryId,
    parentId: entity.parentId,
    version: entity.version,
    updatedAt: entity.updatedAt,
    deleted: entity.deletedAt !== null,
    fields: entity.data,
  };
}

function describe(entity: ProjectedEntity): string {
  if ("withheld" in entity) return `${entity.type} ${entity.id} (out of scope)`;
  if (entity.type === "agent" && "kind" in entity) return `agent ${entity.id} (${entity.kind})`;
  if ("deleted" in entity) {
    const details = [entity.categoryId !== null ? `categoryId ${entity.categoryId}` : null, entity.deleted ? "deleted" : null].filter(Boolean);
    return `${entity.type} ${entity.id}${details.length ? ` (${details.join(", ")})` : ""}`;
  }
  return `${entity.type} ${entity.id}`;
}

/**
 * `"TASK changed: task t_1 (categoryId gym)"`; with no entities, the event source instead:
 * `"WORKOUT changed (event gym-app)"`; without semantic keys, `"Change: …"`. Bounded in entities listed and in length.
 */
export function observationSummary(keys: ReadonlyArray<string>, entities: ReadonlyArray<ProjectedEntity>, source: string): string {
  const head = keys.length ? `${keys.join(", ")} changed` : "Change";
  const shown = entities.slice(0, OBSERVATION_LIMITS.summaryEntities).map(describe);
  const more = entities.length - shown.length;
  const external = source.includes(":") ? ` (${source.replace(":", " ")})` : "";
  const text = shown.length ? `${head}: ${shown.join("; ")}${more > 0 ? `; +${more} more` : ""}${external}` : `${head}${external}`;
  return text.length > OBSERVATION_LIMITS.summaryMaxLength ? `${text.slice(0, OBSERVATION_LIMITS.summaryMaxLength - 1)}…` : text;
}

/**
 * The observation for one matched subscription; pure and deterministic for a given input. Entities
 * that satisfied the predicate come first and are the ones the summary names (a batch also carries
 * related ids — a task's category, an item's checklist — which stay in `data.entities`).
 */
export function subscriptionObservation(input: ObservationInput): SubscriptionObservation {
  const matched = new Set(input.trigger.matchedEntityIds);
  const ordered = [...input.entities.filter((e) => matched.has(e.id)), ...input.entities.filter((e) => !matched.has(e.id))];
  const entities = ordered.map((entity) => projectEntity(entity, input.allowedCategoryIds));
  const named = matched.size > 0 ? entities.filter((entity) => matched.has(entity.id)) : entities;
  const keys = input.tokens.filter((token) => token.tokenClass === "semanticKey").map((token) => token.tokenValue);
  const data: SubscriptionObservation["data"] = {
    trigger: { ...input.trigger, source: input.source, origin: input.origin },
    tokens: [...input.tokens],
    entities,
  };
  if (input.payload !== undefined) data.payload = input.payload;
  return { summary: observationSummary(keys, named, input.source), data };
}
