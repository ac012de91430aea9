import { admitUnderBrakes, type Brake } from "./brakes";
import { BUDGET_DIMENSIONS, checkBudget, checkToolQuota, type BudgetLimits, type BudgetUsage, type BudgetWindow } from "./budget";
import { consumeRateLimit, type RateLimitState } from "./rate-limit";

/**
 * How brakes, daily budgets, per-tool quotas and per-tool rate limits govern one agent's runs.
 * Pure: the agent loads brakes, policy and counters,
 * asks here, and persists what the answer says.
 */

/** The part of the tenant policy that governs runs (quotas per agent per day, rate limits per agent per minute). */
export interface RunPolicy {
  budgets: BudgetLimits;
  toolQuotas: Record<string, number>;
  toolRateLimits: Record<string, number>;
}

export const UNLIMITED_POLICY: RunPolicy = { budgets: {}, toolQuotas: {}, toolRateLimits: {} };

/** The agent's own limit wins per dimension; a dimension neither sets is unlimited. */
export function effectiveBudgetLimits(agent: BudgetLimits | null | undefined, tenant: BudgetLimits): BudgetLimits {
  const limits: BudgetLimits = {};
  for (const dimension of BUDGET_DIMENSIONS) {
    const limit = agent?.[dimension] ?? tenant[dimension];
    if (limit !== undefined) limits[dimension] = limit;
  }
  return limits;
}

export type HaltCode = "brake_engaged" | "brake_paused" | "brake_killed" | "budget_exceeded";

/** Why a run must stop here, with the terminal status it ends in. */
export interface Halt {
  status: "skipped_sleeping" | "failed_terminal";
  code: HaltCode;
  gate: "brake" | "budget";
  detail: Record<string, unknown>;
}

export interface BoundaryInput {
  agent: { agentId: string; kind: string };
  /** `admission`: a wake that never started; `step`: an in-flight run about to take its next step. */
  phase: "admission" | "step";
  brakes: readonly Brake[];
  nowMs: number;
  usage: BudgetUsage;
  limits: BudgetLimits;
}

/**
 * The check at run start and at every step boundary. A wake that never started under a brake is
 * skipped (`skipped_sleeping`/`brake_engaged`): it never runs, its runKey stays recorded. An in-flight
 * run settles at the boundary: pause → `skipped_sleeping`/`brake_paused`, kill → `failed_terminal`/`brake_killed`.
 * Budgets fail closed once a dimension has reached its limit (`failed_terminal`/`budget_exceeded`).
 */
export function haltAtBoundary(input: BoundaryInput): Halt | null {
  const verdict = admitUnderBrakes(input.agent, input.phase === "admission" ? { type: "wake" } : { type: "run_step" }, input.brakes, input.nowMs);
  if (!verdict.admit) {
    const detail = { brakeId: verdict.brakeId, behaviour: verdict.behavior };
    if (input.phase === "admission") return { status: "skipped_sleeping", code: "brake_engaged", gate: "brake", detail };
    return verdict.behavior === "kill"
      ? { status: "failed_terminal", code: "brake_killed", gate: "brake", detail }
      : { status: "skipped_sleeping", code: "brake_paused", gate: "brake", detail };
  }
  if (input.phase === "admission") return null;
  const budget = checkBudget(input.usage, input.limits);
  if (!budget.ok) return { status: "failed_terminal", code: "budget_exceeded", gate: "budget", detail: { dimension: budget.dimension, used: budget.used, limit: budget.limit } };
  return null;
}

export interface ToolGateInput {
  agent: { agentId: string; kind: string };
  /** The tool's name as the tenant sees it (`GET /v1/tools`: `create_task`, `http:weather`). */
  toolName: string;
  mutating: boolean;
  brakes: readonly Brake[];
  nowMs: number;
  window: BudgetWindow;
  limits: BudgetLimits;
  policy: RunPolicy;
  /** Calls per minute for this (agent, tool) when the policy names none. */
  defaultRatePerMinute: number;
  rateState: RateLimitState | null;
}

export type ToolGateCode = "brake_engaged" | "budget_exceeded" | "tool_quota_exceeded" | "rate_limited";

export type ToolGateVerdict =
  | { admit: true; nextRateState: RateLimitState }
  | { admit: false; gate: "brake" | "budget" | "tool_quota" | "rate_limit"; code: ToolGateCode; message: string; retryable: boolean; detail: Record<string, unknown> };

export const RATE_WINDOW_MS = 60_000;

/**
 * One tool call, before it executes, in a fixed order: brakes → daily budget (one more tool call must
 * fit, and no other dimension may be spent) → the tool's daily quota → its per-minute rate limit. Only
 * an admitted call consumes the rate limit; the caller stores `nextRateState` and counts the call.
 */
export function gateToolCall(input: ToolGateInput): ToolGateVerdict {
  const brake = admitUnderBrakes(input.agent, { type: "tool", toolName: input.toolName, mutating: input.mutating }, input.brakes, input.nowMs);
  if (!brake.admit) {
    return {
      admit: false,
      gate: "brake",
      code: "brake_engaged",
      message: `${input.toolName} is stopped by brake ${brake.brakeId} (${brake.behavior})`,
      retryable: false,
      detail: { brakeId: brake.brakeId, behaviour: brake.behavior },
    };
  }
  const budget = checkBudget(input.window.usage, input.limits, { projected: { toolCalls: 1 } });
  if (!budget.ok) {
    return {
      admit: false,
      gate: "budget",
      code: "budget_exceeded",
      message: `the daily ${budget.dimension} budget is spent (${budget.used} of ${budget.limit}); it resets at the tenant's next local midnight`,
      retryable: false,
      detail: { dimension: budget.dimension, used: budget.used, limit: budget.limit, day: input.window.dayKey },
    };
  }
  const maxPerDay = input.policy.toolQuotas[input.toolName];
  const quota = checkToolQuota(input.toolName, maxPerDay === undefined ? undefined : { maxPerDay }, { session: 0, day: input.window.toolCallsByTool[input.toolName] ?? 0 });
  if (!quota.ok) {
    return {
      admit: false,
      gate: "tool_quota",
      code: "tool_quota_exceeded",
      message: `${input.toolName} may be called ${quota.limit} times per day by this agent`,
      retryable: false,
      detail: { used: quota.used, limit: quota.limit, day: input.window.dayKey, auditReason: quota.auditReason },
    };
  }
  const perMinute = input.policy.toolRateLimits[input.toolName] ?? input.defaultRatePerMinute;
  const rate = consumeRateLimit(input.rateState, input.nowMs, perMinute, RATE_WINDOW_MS);
  if (!rate.allowed) {
    return {
      admit: false,
      gate: "rate_limit",
      code: "rate_limited",
      message: `${input.toolName} may be called ${perMinute} times per minute by this agent; retry in ${rate.retryAfterSeconds}s`,
      retryable: true,
      detail: { limit: perMinute, retryAfterSeconds: rate.retryAfterSeconds },
    };
  }
  return { admit: true, nextRateState: rate.nextState };
}
