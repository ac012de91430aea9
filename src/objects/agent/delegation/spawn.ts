import { config } from "../../../config";
import type { ChildReport, ChildWake, DelegationContext, SpawnDecisionRecord } from "../../../schema/contracts";
import { admitUnderBrakes, type Brake } from "../../../core/governance/brakes";
import { dayKey, type BudgetLimits } from "../../../core/governance/budget";
import { H } from "../../../core/ids/hash";
import { runKeys, threadIds, type WakeReason } from "../../../core/ids/run-keys";
import { effectiveBudgetLimits } from "../../../core/governance/run-governance";
import { admitSpawn, childExpiresAtMs, SPAWN_LIMITS, type OnComplete } from "../../../core/governance/spawn-admission";
import { projectChildResult, projectForBoundary } from "../../../core/governance/spawn-projection";
import { toolFailure, toolSuccess, type RiskLevel, type ToolResultEnvelope, RISK_LEVELS } from "../../../core/tools/tool-envelopes";
import { and, eq } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { CreateAgentBody, type Agent, type AgentLineage } from "../../../schema/agents/agents";
import type { WakeJob } from "../../../schema/agents/wake";
import { allowedTools, profileForKind, PROFILE_BY_KIND, resolveAgentProfile, type CapabilityOverride, type ProfileName } from "../../../tools/capabilities";
import { builtinTools, CAPABILITIES, getTool, TOOL_NAMES } from "../../../tools/registry";
import { spawnAgent } from "../../../tools/registry/delegation";
import type { Result } from "../../../core/runtime/result";
import type { PlannedAction } from "../tools";
import type { ChildRecord, ChildrenStore } from "./children";
import type { RunTrace } from "../runs";
import type { AgentDb } from "../types";

export const SPAWN_TOOL = "spawn_agent";

export type { DelegationContext, SpawnDecisionRecord } from "../../../schema/contracts";

/** The child's first wake (the goal, as the runtime hands it over, never the parent's transcript) and its report. */
export type { ChildReport, ChildWake } from "../../../schema/contracts";

export interface SpawnDeps {
  db: AgentDb;
  trace: RunTrace;
  children: ChildrenStore;
  context(parent: Agent): Promise<DelegationContext>;
  recordDecision(decision: SpawnDecisionRecord): void;
  createChild(childId: string, body: CreateAgentBody, lineage: AgentLineage, wake: ChildWake): Promise<Result<{ agent: Agent }>>;
  now(): number;
}

/** Deterministic from the plan: a replayed `spawn_agent` operation names the same child. */
export const childIdFor = (parentId: string, operationId: string) => `ag_${H(parentId, "spawn", operationId).slice(0, 40)}`;
/** The child's delegated run (reason `manual`, keyed by the spawn operation). */
export const delegatedRunKey = (childId: string, spawnOperationId: string) => runKeys.manual(childId, `spawn:${spawnOperationId}`);

/**
 * The parent's side of delegation: admits a `spawn_agent` call (deny by default, pure core),
 * projects what the child may know, creates it idempotently from the persisted plan, and turns a
 * child's report into a `child` wake.
 */
export class Spawner {
  constructor(private readonly deps: SpawnDeps) {}

  async execute(parent: Agent, action: PlannedAction, reason: WakeReason): Promise<ToolResultEnvelope> {
    const ref = { actionRefId: action.operationId };
    const parsed = spawnAgent.inputSchema.safeParse(action.envelope.args);
    if (!parsed.success) return toolFailure(action.envelope, { ...ref, code: "invalid_arguments", message: parsed.error.issues.map((issue) => issue.message).join("; "), retryable: false });
    const request = parsed.data;
    // A replay of an admitted operation reuses its decision: admitting again would count the child against itself.
    let record = this.deps.children.byOperation(action.operationId);
    if (!record) {
      const admitted = await this.admit(parent, action, reason, request);
      if (!admitted.ok) return admitted.failure;
      record = admitted.record;
    }
    const lineage = record.request.lineage as AgentLineage;
    const body = CreateAgentBody.safeParse(record.request.body);
    if (!body.success) return toolFailure(action.envelope, { ...ref, code: "invalid_arguments", message: body.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "), retryable: false });
    const created = await this.deps.createChild(record.childId, body.data, lineage, record.request.wake as ChildWake);
    if (!created.ok) return toolFailure(action.envelope, { ...ref, code: created.code, message: created.message, retryable: created.code !== "conflict" });
    return toolSuccess(action.envelope, {
      ...ref,
      output: { childId: record.childId, childRunKey: record.childRunKey, depth: lineage.depth, expiresAt: lineage.expiresAt ?? "", status: "spawned" },
      links: [{ relation: "tool_effect", target: { type: "agent", id: record.childId }, effect: "created" }],
    });
  }

  private async admit(parent: Agent, action: PlannedAction, reason: WakeReason, request: SpawnRequest): Promise<{ ok: true; record: ChildRecord } | { ok: false; failure: ToolResultEnvelope }> {
    const ref = { actionRefId: action.operationId };
    const context = await this.deps.context(parent);
    const nowMs = this.deps.now();
    const day = dayKey(nowMs, context.timeZone);
    const parentProfile = resolveAgentProfile(parent.kind, parent.config.capabilities ?? undefined);
    const parentTools = allowedTools(parentProfile, builtinTools, reason).map((tool) => tool.name);
    const brake = admitUnderBrakes({ agentId: parent.id, kind: parent.kind }, { type: "tool", toolName: SPAWN_TOOL, mutating: true }, context.brakes, nowMs);
    const unborn = this.deps.children.running().filter((child) => !context.liveChildIds.includes(child.childId)).length;
    const verdict = admitSpawn({
      request,
      parent: { lifecycle: parent.lifecycle, depth: parent.config.lineage?.depth ?? 0, allowedCategoryIds: parent.allowedCategoryIds, allowedTools: parentTools },
      liveChildren: context.liveChildIds.length + unborn,
      budget: { limit: effectiveBudgetLimits(parent.config.budgets, context.policy.budgets).tokens ?? null, used: this.tokensUsedOn(day), reserved: this.deps.children.reservedOn(day) },
      killSwitch: brake.admit ? { engaged: false } : { engaged: true, source: `brake ${brake.brakeId}` },
      limits: SPAWN_LIMITS,
    });
    const childId = childIdFor(parent.id, action.operationId);
    if (!verdict.admitted) {
      this.deps.trace.policy(action.runKey, { gate: "spawn_admission", outcome: "denied", code: "spawn_denied", subject: SPAWN_TOOL, detail: { operationId: action.operationId, reason: verdict.reason } });
      this.deps.recordDecision({ parentId: parent.id, operationId: action.operationId, outcome: "denied", reason: verdict.reason, childId: null });
      return { ok: false, failure: toolFailure(action.envelope, { ...ref, code: "spawn_denied", message: verdict.message, retryable: false, details: { reason: verdict.reason } }) };
    }
    const projection = projectForBoundary("agent_spawn_input", request);
    if (!projection.ok) {
      this.deps.trace.policy(action.runKey, { gate: "need_to_know", outcome: "denied", code: projection.code, subject: "agent_spawn_input", detail: { violations: projection.violations } });
      return { ok: false, failure: toolFailure(action.envelope, { ...ref, code: projection.code, message: projection.violations.join("; "), retryable: false }) };
    }
    const childRunKey = delegatedRunKey(childId, action.operationId);
    const lineage: AgentLineage = {
      parentId: parent.id,
      rootId: parent.config.lineage?.rootId ?? parent.id,
      depth: verdict.childDepth,
      spawnOperationId: action.operationId,
      onComplete: request.onComplete,
      expiresAt: new Date(childExpiresAtMs(nowMs, request.ttl, parent.config.lineage?.expiresAt ? Date.parse(parent.config.lineage.expiresAt) : null)).toISOString(),
      maxSteps: request.maxSteps,
      tokenBudget: request.tokenBudget,
    };
    const wake: ChildWake = {
      runKey: childRunKey,
      reason: "manual",
      threadId: threadIds.autonomous(childId, childRunKey),
      authority: "runtime_instruction",
      input: { text: goalText(request.goal, request.inputRefs), delegation: projection.payload },
    };
    const record = this.deps.children.admit({
      operationId: action.operationId,
      childId,
      runKey: action.runKey,
      childRunKey,
      onComplete: request.onComplete,
      tokenBudget: request.tokenBudget,
      spawnDay: day,
      request: { body: childBody(parent, request, parentProfile.maxRiskLevel), lineage, wake, dropped: projection.dropped },
    });
    this.deps.trace.policy(action.runKey, {
      gate: "spawn_admission",
      outcome: "allowed",
      subject: SPAWN_TOOL,
      detail: { operationId: action.operationId, childId, depth: verdict.childDepth, tokenBudget: request.tokenBudget, budgetRemaining: verdict.budgetRemaining },
    });
    this.deps.recordDecision({ parentId: parent.id, operationId: action.operationId, outcome: "admitted", reason: null, childId });
    return { ok: true, record };
  }

  /**
   * A child's report arrives: recorded once, re-projected (the parent guards its own boundary too),
   * and turned into the parent's `child` wake — runKey H(parentId, "child", childId, childRunKey), on
   * the thread of the run that spawned it. The child's words are data for the parent, never instructions.
   */
  receiveReport(parent: Agent, report: ChildReport, threadOfRun: (runKey: string) => string | null): Result<{ wake: ChildWake }> {
    const child = this.deps.children.byChild(report.childId);
    if (!child || child.childRunKey !== report.childRunKey) return { ok: false, code: "not_found", message: "no such child run of this agent" };
    const projection = projectChildResult(report);
    const payload = projection.ok ? projection.payload : { childId: report.childId, childRunKey: report.childRunKey, status: "failed_terminal", errorCode: projection.code, reply: null };
    this.deps.children.recordResult(report.childId, payload.status === "completed" ? "completed" : "failed", payload);
    const runKey = runKeys.child(parent.id, report.childId, report.childRunKey);
    const reply = typeof payload.reply === "string" ? `: ${payload.reply.slice(0, 200)}` : "";
    return {
      ok: true,
      wake: {
        runKey,
        reason: "child",
        threadId: threadOfRun(child.runKey) ?? threadIds.autonomous(parent.id, runKey),
        authority: "external_evidence",
        input: { observation: { summary: `child ${report.childId} ${String(payload.status)}${reply}`, data: payload } },
      },
    };
  }

  private tokensUsedOn(day: string): number {
    const row = this.deps.db
      .select({ value: schema.usageDaily.value })
      .from(schema.usageDaily)
      .where(and(eq(schema.usageDaily.day, day), eq(schema.usageDaily.dimension, "tokens"), eq(schema.usageDaily.subject, "")))
      .get();
    return row?.value ?? 0;
  }
}

export type SpawnRequest = ReturnType<typeof spawnAgent.inputSchema.parse>;

/** What a child reports about its delegated run (already projected by the child). */
/** The goal is the child's only text; references are named, never expanded. */
function goalText(goal: string, inputRefs: ReadonlyArray<{ type: string; id: string }>): string {
  return inputRefs.length === 0 ? goal : `${goal}\n\nInput references: ${inputRefs.map((ref) => `${ref.type}:${ref.id}`).join(", ")}`;
}

/**
 * The child's configuration: the parent's model setup (model, playbook, instructions, fallbacks,
 * control mode), but exactly the delegated tools and categories, a risk ceiling no higher than
 * either the kind's or the parent's, and the delegated token budget as its daily token limit.
 */
export function childBody(parent: Agent, request: SpawnRequest, parentMaxRisk: RiskLevel): Record<string, unknown> {
  return {
    kind: request.requestedAgentKind,
    displayName: `${parent.displayName} › ${request.requestedAgentKind}`.slice(0, 120),
    mode: "autonomous",
    allowedCategoryIds: request.allowedCategoryIds,
    ...(parent.config.instructions ? { instructions: parent.config.instructions } : {}),
    model: parent.config.modelId,
    modelOptions: parent.config.modelOptions,
    ...(parent.config.playbook ? { playbook: parent.config.playbook } : {}),
    capabilities: childCapabilities(request.requestedAgentKind, request.allowedTools, parentMaxRisk),
    fallbackModels: parent.config.fallbackModels,
    controlMode: parent.config.controlMode,
    budgets: { tokens: request.tokenBudget },
    start: true,
  };
}

/** Capabilities = exactly those the delegated tools need; every other built-in tool denied by name. */
export function childCapabilities(kind: string, tools: readonly string[], parentMaxRisk: RiskLevel): CapabilityOverride {
  const needed = new Set(tools.flatMap((name) => getTool(name)?.capabilitiesRequired ?? []));
  const kindProfile = profileForKind(kind);
  const ceiling = RISK_LEVELS[Math.min(RISK_LEVELS.indexOf(kindProfile.maxRiskLevel), RISK_LEVELS.indexOf(parentMaxRisk))]!;
  return {
    profile: (Object.hasOwn(PROFILE_BY_KIND, kind) ? PROFILE_BY_KIND[kind] : "default") as ProfileName,
    grant: CAPABILITIES.filter((capability) => needed.has(capability)),
    revoke: CAPABILITIES.filter((capability) => !needed.has(capability)),
    denyTools: TOOL_NAMES.filter((name) => !tools.includes(name)),
    maxRiskLevel: ceiling,
  };
}

export type { OnComplete };

/** Steps per run: the default, or fewer for a child whose SpawnRequest asked for fewer. */
export function maxStepsFor(agent: Agent): number {
  return Math.min(config.run.maxStepsPerRun, agent.config.lineage?.maxSteps ?? config.run.maxStepsPerRun);
}
