/**
 * Spawn admission (seed 000 Phase -1B): only the runtime admits a child, and it
 * denies by default. A request passes only when every gate says yes, checked in a fixed order so
 * the same situation always yields the same reason: kill switch → parent lifecycle → depth →
 * concurrent children → category subset → tool subset → token budget.
 */

/** Seed 000 `onComplete` strategies Vigil implements (`handoff_on_failure` needs handoff, which is not built). */
export const ON_COMPLETE_STRATEGIES = ["report_result_to_parent", "destroy_child_on_success", "keep_child_active"] as const;
export type OnComplete = (typeof ON_COMPLETE_STRATEGIES)[number];

/** Hard caps: a top-level agent is depth 0, its children depth 1, grandchildren depth 2. */
export const SPAWN_LIMITS = Object.freeze({ maxDepth: 2, maxConcurrentChildren: 5 });

export const SPAWN_DENY_REASONS = [
  "kill_switch",
  "parent_not_active",
  "depth_exceeded",
  "too_many_children",
  "categories_not_subset",
  "tools_not_subset",
  "no_budget",
  "budget_exhausted",
] as const;
export type SpawnDenyReason = (typeof SPAWN_DENY_REASONS)[number];

export interface SpawnAdmissionInput {
  request: { allowedCategoryIds: readonly string[]; allowedTools: readonly string[]; tokenBudget: number };
  parent: {
    lifecycle: string;
    /** 0 for a top-level agent. */
    depth: number;
    allowedCategoryIds: readonly string[];
    /** The tools the parent itself may call on this run. */
    allowedTools: readonly string[];
  };
  /** Children of the parent that can still run (not paused, not destroyed), admitted-but-unborn ones included. */
  liveChildren: number;
  /**
   * The parent's token budget for the day (`limit` null: none set → nothing to draw from), what it
   * already used itself today, and what its children spawned today were given.
   */
  budget: { limit: number | null; used: number; reserved: number };
  /** A brake or deployment switch that stops spawning. */
  killSwitch: { engaged: false } | { engaged: true; source: string };
  limits?: { maxDepth: number; maxConcurrentChildren: number };
}

export type SpawnAdmission =
  | { admitted: true; childDepth: number; budgetRemaining: number }
  | { admitted: false; reason: SpawnDenyReason; message: string };

const deny = (reason: SpawnDenyReason, message: string): SpawnAdmission => ({ admitted: false, reason, message });

/** Decides one spawn request; pure, total, deny-by-default. */
export function admitSpawn(input: SpawnAdmissionInput): SpawnAdmission {
  const limits = input.limits ?? SPAWN_LIMITS;
  const { request, parent, budget } = input;
  if (input.killSwitch.engaged) return deny("kill_switch", `spawning is stopped (${input.killSwitch.source})`);
  if (parent.lifecycle !== "active") return deny("parent_not_active", `the parent is ${parent.lifecycle}`);
  const childDepth = parent.depth + 1;
  if (!Number.isInteger(parent.depth) || parent.depth < 0 || childDepth > limits.maxDepth) {
    return deny("depth_exceeded", `a child would be at depth ${childDepth}; the limit is ${limits.maxDepth}`);
  }
  if (!(input.liveChildren >= 0) || input.liveChildren >= limits.maxConcurrentChildren) {
    return deny("too_many_children", `the parent already has ${input.liveChildren} live children; the limit is ${limits.maxConcurrentChildren}`);
  }
  const outsideCategories = notIn(request.allowedCategoryIds, parent.allowedCategoryIds);
  if (outsideCategories.length > 0) return deny("categories_not_subset", `categories outside the parent's scope: ${outsideCategories.join(", ")}`);
  const outsideTools = notIn(request.allowedTools, parent.allowedTools);
  if (outsideTools.length > 0) return deny("tools_not_subset", `tools the parent may not call itself: ${outsideTools.join(", ")}`);
  if (budget.limit === null || !Number.isFinite(budget.limit)) return deny("no_budget", "the parent has no token budget to draw a child's tokenBudget from");
  const remaining = budget.limit - Math.max(0, budget.used) - Math.max(0, budget.reserved);
  if (!Number.isSafeInteger(request.tokenBudget) || request.tokenBudget <= 0 || request.tokenBudget > remaining) {
    return deny("budget_exhausted", `tokenBudget ${request.tokenBudget} exceeds the ${Math.max(0, remaining)} tokens the parent has left today`);
  }
  return { admitted: true, childDepth, budgetRemaining: remaining - request.tokenBudget };
}

function notIn(values: readonly string[], allowed: readonly string[]): string[] {
  const permitted = new Set(allowed);
  return [...new Set(values)].filter((value) => !permitted.has(value)).sort();
}

/** A child never outlives its parent's own lineage deadline: min(now + ttl, parent's expiry). */
export function childExpiresAtMs(nowMs: number, ttlSeconds: number, parentExpiresAtMs: number | null): number {
  const own = nowMs + ttlSeconds * 1000;
  return parentExpiresAtMs === null ? own : Math.min(own, parentExpiresAtMs);
}
