import type { Brake } from "../../../core/brakes";
import type { ExtensionSlotRegistry } from "../../../core/extension-slots";
import type { RunPolicy } from "../../../core/run-governance";
import type { TenantBrakes } from "./brakes";
import type { Governance } from "./governance";

export interface RunGovernance {
  brakes: Brake[];
  timeZone: string;
  policy: RunPolicy;
  /** Registered extension slot keys (the slots API and `memory_update_slot` validate against them). */
  extensionSlots: ExtensionSlotRegistry;
  /** The tenant's override of the interactive session inactivity TTL, if any. */
  sessionIdleTtlSeconds: number | null;
}

/**
 * What governs one agent's run right now, in one round trip: the active brakes that may concern it,
 * the tenant's time zone (budget days) and the policy's budgets, tool quotas and tool rate limits.
 */
export function runGovernanceFor(deps: { brakes: TenantBrakes; governance: Governance; timeZone: string }, agent: { agentId: string; kind: string }): RunGovernance {
  const policy = deps.governance.policy();
  return {
    brakes: deps.brakes.activeFor(agent),
    timeZone: deps.timeZone,
    policy: { budgets: policy.budgets, toolQuotas: policy.toolQuotas, toolRateLimits: policy.toolRateLimits },
    extensionSlots: policy.extensionSlots,
    sessionIdleTtlSeconds: policy.sessions.idleTtlSeconds ?? null,
  };
}
