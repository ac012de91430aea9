import { eq } from "drizzle-orm";
import { admitUnderBrakes, type Brake } from "../../../core/governance/brakes";
import type { ExtensionSlotRegistry } from "../../../core/memory/extension-slots";
import { BUDGET_DIMENSIONS, dayKey, nextDayStartMs, type BudgetUsage } from "../../../core/governance/budget";
import { rateLimitKeys, type RateLimitState } from "../../../core/governance/rate-limit";
import { effectiveBudgetLimits, gateToolCall, haltAtBoundary, type Halt, type RunPolicy } from "../../../core/governance/run-governance";
import { toolFailure, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import { counters } from "../../../db/common-schema";
import type { Agent } from "../../../schema/agents/agents";
import type { AgentUsage } from "../../../schema/admin/brakes";
import type { PlannedAction } from "../tools";
import { httpInvocationName, isHttpModelName } from "../../../schema/admin/tools";
import { RunTrace, type AttemptEntry, type UsageEntry } from "./run-trace";
import type { AgentDb } from "../types";
import type { UsageStore } from "./usage-store";

/** What the TenantDO says governs this agent right now (`TenantDO.governanceFor`). */
export interface Governance {
  brakes: Brake[];
  timeZone: string;
  policy: RunPolicy;
  /** Registered extension slot keys (absent from older snapshots: none registered). */
  extensionSlots?: ExtensionSlotRegistry;
  /** The tenant's session inactivity TTL override (null/absent: the deployment default). */
  sessionIdleTtlSeconds?: number | null;
}

export interface RunGovernorDeps {
  db: AgentDb;
  usage: UsageStore;
  trace: RunTrace;
  governanceFor(agent: { agentId: string; kind: string }): Promise<Governance>;
  /** Calls per minute per (agent, tool) when the policy names none (SPEC §2 default 60). */
  defaultToolRatePerMinute: number;
  now?: () => number;
}

/**
 * The agent's side of brakes, budgets, tool quotas and tool rate limits (SPEC §3, §5). It asks the
 * TenantDO for the brakes and policy in force at run start, at every step boundary and before every
 * tool call, counts usage per tenant-local day in the agent's SQLite, and writes a `policy` trace
 * entry for every refusal. The rules are in src/core/governance/run-governance.ts.
 */
export class RunGovernor {
  /** The tenant's time zone as last reported; model usage is booked synchronously, so it cannot ask. */
  private timeZone = "UTC";
  /** The tenant's session TTL override as last reported (null: none, or not asked yet). */
  private lastSessionTtl: number | null = null;
  /** The extension slot registry as last reported (a run's admission check reads it first); empty: nothing is visible. */
  private lastExtensionSlots: ExtensionSlotRegistry = {};

  constructor(private readonly deps: RunGovernorDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private async governance(agent: Agent): Promise<Governance> {
    const governance = await this.deps.governanceFor({ agentId: agent.id, kind: agent.kind });
    this.timeZone = governance.timeZone;
    this.lastSessionTtl = governance.sessionIdleTtlSeconds ?? null;
    this.lastExtensionSlots = governance.extensionSlots ?? {};
    return governance;
  }

  private today(): string {
    return dayKey(this.now(), this.timeZone);
  }

  /**
   * Run start (`fresh`: the wake never ran) and every step boundary. Returns why the run must end here,
   * with a policy trace entry already written, or null to go on.
   */
  async check(agent: Agent, runKey: string, phase: "admission" | "step"): Promise<Halt | null> {
    const governance = await this.governance(agent);
    const halt = haltAtBoundary({
      agent: { agentId: agent.id, kind: agent.kind },
      phase,
      brakes: governance.brakes,
      nowMs: this.now(),
      usage: this.deps.usage.window(this.today()).usage,
      limits: effectiveBudgetLimits(agent.config.budgets, governance.policy.budgets),
    });
    if (halt) this.deps.trace.policy(runKey, { gate: halt.gate, outcome: "denied", code: halt.code, subject: phase, detail: halt.detail });
    return halt;
  }

  /** The tenant's registered extension slot keys, read now (one TenantDO call). */
  async extensionSlots(agent: Agent): Promise<ExtensionSlotRegistry> {
    return (await this.governance(agent)).extensionSlots ?? {};
  }

  /** Which extension keys may reach a model, as of the last governance read (the run's admission check). */
  modelVisibility(): ExtensionSlotRegistry {
    return this.lastExtensionSlots;
  }

  /** The session inactivity TTL in force as of the last governance read (a turn's brake check reads it just before). */
  sessionIdleTtlSeconds(fallback: number): number {
    return this.lastSessionTtl ?? fallback;
  }

  /** A new wake through the API (message, manual wake) is refused while an agent-wide brake covers the agent. */
  async brakeOnWake(agent: Agent): Promise<{ brakeId: string; behaviour: string } | null> {
    const governance = await this.governance(agent);
    const verdict = admitUnderBrakes({ agentId: agent.id, kind: agent.kind }, { type: "wake" }, governance.brakes, this.now());
    return verdict.admit ? null : { brakeId: verdict.brakeId, behaviour: verdict.behavior };
  }

  /**
   * The gate before one tool call executes: null admits it (and counts it against the day's budget,
   * the tool's quota and its rate limit); otherwise the structured refusal the model receives.
   */
  async gateTool(agent: Agent, action: PlannedAction, mutating: boolean): Promise<ToolResultEnvelope | null> {
    const governance = await this.governance(agent);
    const toolName = tenantToolName(action.toolName);
    const day = this.today();
    const rateKey = rateLimitKeys.agentTool(agent.id, toolName);
    const verdict = gateToolCall({
      agent: { agentId: agent.id, kind: agent.kind },
      toolName,
      mutating,
      brakes: governance.brakes,
      nowMs: this.now(),
      window: this.deps.usage.window(day),
      limits: effectiveBudgetLimits(agent.config.budgets, governance.policy.budgets),
      policy: governance.policy,
      defaultRatePerMinute: this.deps.defaultToolRatePerMinute,
      rateState: (this.deps.db.select().from(counters).where(eq(counters.key, rateKey)).get()?.state as RateLimitState | undefined) ?? null,
    });
    if (!verdict.admit) {
      this.deps.trace.policy(action.runKey, { gate: verdict.gate, outcome: "denied", code: verdict.code, subject: toolName, detail: { ...verdict.detail, operationId: action.operationId } });
      return toolFailure(action.envelope, { actionRefId: action.operationId, code: verdict.code, message: verdict.message, retryable: verdict.retryable });
    }
    const state = verdict.nextRateState as unknown as Record<string, unknown>;
    this.deps.db.insert(counters).values({ key: rateKey, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
    this.deps.usage.add(day, { toolCalls: 1 }, toolName);
    return null;
  }

  /** Books one model call's tokens and cost (every model call records a RunTrace usage row). */
  recordModelUsage(entry: UsageEntry): void {
    this.deps.usage.add(this.today(), { tokens: entry.inputTokens + entry.outputTokens, costMicroUsd: entry.costMicros });
  }

  /** Wall-clock runtime of one run segment, booked at each `tick` (step boundaries and the segment's end). */
  runtimeMeter(): { tick(): void } {
    let last = this.now();
    return {
      tick: () => {
        const now = this.now();
        if (now > last) this.deps.usage.add(this.today(), { runtimeMs: now - last });
        last = now;
      },
    };
  }

  /** `GET /v1/agents/:id/usage`: a day (today by default, tenant-local) against the limits in force. */
  async usageView(agent: Agent, day?: string): Promise<AgentUsage> {
    const governance = await this.governance(agent);
    const today = this.today();
    const window = this.deps.usage.window(day ?? today);
    const limits = effectiveBudgetLimits(agent.config.budgets, governance.policy.budgets);
    const names = new Set([...Object.keys(window.toolCallsByTool), ...Object.keys(governance.policy.toolQuotas)]);
    return {
      agentId: agent.id,
      day: window.dayKey,
      timeZone: governance.timeZone,
      usage: window.usage,
      limits: Object.fromEntries(BUDGET_DIMENSIONS.map((dimension) => [dimension, limits[dimension] ?? null])) as Record<keyof BudgetUsage, number | null>,
      tools: [...names].sort().map((toolName) => ({ toolName, calls: window.toolCallsByTool[toolName] ?? 0, quotaPerDay: governance.policy.toolQuotas[toolName] ?? null })),
      resetsAt: window.dayKey === today ? new Date(nextDayStartMs(this.now(), governance.timeZone)).toISOString() : null,
    };
  }
}

/** Tools are named as the tenant sees them (`GET /v1/tools`): tenant HTTP tools as `http:<name>`. */
export const tenantToolName = (modelName: string): string => (isHttpModelName(modelName) ? httpInvocationName(modelName) : modelName);

/** The run trace, with every model call's usage also booked against the agent's daily budget. */
export class MeteredRunTrace extends RunTrace {
  constructor(
    db: AgentDb,
    private readonly onUsage: (entry: UsageEntry) => void,
  ) {
    super(db);
  }

  override usage(runKey: string, entry: UsageEntry): void {
    super.usage(runKey, entry);
    this.onUsage(entry);
  }

  override succeeded(runKey: string, attempt: AttemptEntry, usage: UsageEntry): void {
    super.succeeded(runKey, attempt, usage);
    this.onUsage(usage);
  }
}
