/**
 * Action identity (seed 000 §4.4, seed 001 §6.2):
 *
 * - `canonicalArgsHash = canonicalHash(args)` — SHA-256 of canonical JSON (sorted keys, no
 *   insignificant whitespace). Callers pass the arguments *after* validation by the tool's input
 *   schema, so defaults are filled and `{}` and `{preserveCheckedState: true}` hash alike.
 * - `scopeSnapshot` — the agent's `allowedCategoryIds`, deduplicated and sorted in code-unit order;
 *   its canonical string is that array's canonical JSON, e.g. `["cat-a","cat-b"]` (`[]` when empty).
 * - `targetRefs` — the resolved entity refs as `"type:id"` keys, deduplicated and sorted in code-unit
 *   order; its canonical string is that array's canonical JSON, e.g. `["checklist:a","task:t1"]`.
 *   JSON (not a bare join) keeps ids containing `,` from colliding.
 * - `actionStableId = H(toolName, canonicalArgsHash, scopeSnapshotKey, targetRefsKey)`.
 * - `operationId = H(runKey, actionStableId)`.
 *
 * Identical intents (same tool, args, scope and targets) in one run are one operation: they share
 * an `operationId`, so the second is a replay of the first, never a second mutation.
 */
import { canonicalHash, canonicalJson, H } from "./hash";
import { sortedUniqueRefKeys, type EntityRef } from "./entity-refs";
import { compareStrings } from "../wakes/tokens";

/** `canonicalHash(args)`. */
export function canonicalArgsHash(args: unknown): string {
  return canonicalHash(args);
}

/** The agent's category scope at planning time: unique ids in code-unit order. */
export function scopeSnapshot(allowedCategoryIds: Iterable<string>): string[] {
  return [...new Set(allowedCategoryIds)].sort(compareStrings);
}

/** Canonical string of a scope snapshot: `canonicalJson(scopeSnapshot(ids))`. */
export function scopeSnapshotKey(allowedCategoryIds: Iterable<string>): string {
  return canonicalJson(scopeSnapshot(allowedCategoryIds));
}

/** Canonical string of the resolved targets: `canonicalJson(sortedUniqueRefKeys(refs))`. */
export function targetRefsKey(targetRefs: Iterable<EntityRef>): string {
  return canonicalJson(sortedUniqueRefKeys(targetRefs));
}

/** What a planned action is, before any run binds it. */
export interface ActionIntent {
  toolName: string;
  /** Validated arguments (the tool's input schema output). */
  args: unknown;
  allowedCategoryIds: Iterable<string>;
  targetRefs: Iterable<EntityRef>;
}

/** `H(toolName, canonicalArgsHash(args), scopeSnapshotKey, targetRefsKey)`. */
export function actionStableId(intent: ActionIntent): string {
  return H(intent.toolName, canonicalArgsHash(intent.args), scopeSnapshotKey(intent.allowedCategoryIds), targetRefsKey(intent.targetRefs));
}

/** `H(runKey, actionStableId)`: the saga instance id and the journal's idempotency key. */
export function operationId(runKey: string, stableId: string): string {
  return H(runKey, stableId);
}
