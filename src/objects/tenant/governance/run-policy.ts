import type { RunGovernance } from "../../../schema/contracts";
import type { TenantBrakes } from "./brakes";
import type { Governance } from "./governance";

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
