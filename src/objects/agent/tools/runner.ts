import type { TrustLevel } from "../../../core/wakes/provenance";
import { H } from "../../../core/ids/hash";
import type { WakeReason } from "../../../core/ids/run-keys";
import { toolFailure, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import type { Agent } from "../../../schema/agents/agents";
import { resolveAgentProfile, checkToolAccess } from "../../../tools/capabilities";
import type { ToolInvocation } from "../../../tools/invocation";
import { getTool } from "../../../tools/registry";
import type { ToolDefinition } from "../../../tools/registry/types";
import type { ActionStore, PlannedAction } from "./actions";
import { AGENT_SIDE_TOOLS, executeAgentTool, type AgentToolDeps } from "./agent-tools";
import { httpInvocationName, isHttpModelName, isTenantToolModelName } from "../../../schema/admin/tools";
import type { HttpToolGate } from "./http-tools";

/** What the gate and executor need of a tool, builtin (with zod schemas) or tenant HTTP. */
type GatedTool = ToolDefinition | HttpToolGate;
import type { EventLog } from "../events";
import type { History } from "../memory";

export interface ToolCallRequest {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The model's confidence in this call (0–1), when its provider offers one; feeds the approval gate only. */
  confidence?: number;
}

export interface ToolRunnerDeps {
  actions: ActionStore;
  history: History;
  events: EventLog;
  agentTools: AgentToolDeps;
  /** Runs a read-only (or preview) call in the TenantDO directly: no saga, no side effect. */
  executeTenantTool(invocation: ToolInvocation): Promise<ToolResultEnvelope>;
  /** The tenant's HTTP tools (kind "http" listings). */
  tenantTools(): Promise<HttpToolGate[]>;
  /** The thread a run writes to (phase 2 may arrive after a restart). */
  threadOfRun(runKey: string): string;
  /** Starts the ToolSagaWorkflow for a mutating call; idempotent by operationId. With `approval`, the saga first waits for that decision. */
  startSaga(invocation: ToolInvocation, approval?: { decisionId: string }): Promise<void>;
  /** Seed 002 approval gate (src/objects/agent/approval-gate.ts): the decision a mutating call must wait for, or null. */
  approvalFor?(context: StepContext, action: PlannedAction, tool: GatedTool, confidence?: number): Promise<{ decisionId: string } | null>;
  /** `spawn_agent`: admission, NEED_TO_KNOW projection and idempotent child creation (src/objects/agent/spawn.ts). */
  spawn?(context: StepContext, action: PlannedAction): Promise<ToolResultEnvelope>;
  /** Brakes, daily budget, tool quota and rate limit (src/objects/agent/budgets.ts): null admits the call, else its refusal. */
  gateTool?(context: StepContext, action: PlannedAction, mutating: boolean): Promise<ToolResultEnvelope | null>;
}

export interface StepContext {
  agent: Agent;
  runKey: string;
  reason: WakeReason;
  threadId: string;
  step: number;
  /** The trust level of the input this run answers (core/wakes/provenance.ts). */
  inputTrust: TrustLevel;
}

/** A stand-in definition so that even a call to an unknown tool gets a plan row and a structured refusal. */
const UNKNOWN_TOOL = { version: 0, riskLevel: "low" as const };

export const toolMessageIds = {
  action: (operationId: string) => H(operationId, "action"),
  result: (operationId: string) => H(operationId, "toolResult"),
};

/**
 * One step's tool calls: validate, gate, plan (persisted before anything executes), then execute
 * agent-side and read-only calls at once and start a saga for each mutating call. Returns
 * "waiting" while a saga is still out; its phase 2 resumes the run.
 */
export class ToolRunner {
  constructor(private readonly deps: ToolRunnerDeps) {}

  async runStep(context: StepContext, calls: ReadonlyArray<ToolCallRequest>): Promise<"done" | "waiting"> {
    const httpTools = calls.some((call) => isTenantToolModelName(call.toolName)) ? await this.deps.tenantTools() : [];
    // Plan every call of the step first, in one synchronous stretch, so they commit together.
    const planned = calls.map((call, callIndex) => this.planCall(context, call, callIndex, httpTools));
    let waiting = false;
    for (const { action, refusal, tool } of planned) {
      if (action.status === "completed" || action.status === "failed") continue;
      if (refusal) {
        this.complete(action.operationId, refusal);
        continue;
      }
      if (action.status === "executing" || action.status === "awaiting_approval") {
        waiting = true;
        continue;
      }
      // ── Governance gate (helper "brakes"): brake → daily budget → tool quota → rate limit; a refusal is the call's toolResult ──
      if (this.deps.gateTool) {
        const mutating = tool!.sideEffects.kind !== "none" && !(action.envelope.previewOnly && !isTenantToolModelName(action.toolName));
        const refused = await this.deps.gateTool(context, action, mutating);
        if (refused) {
          this.complete(action.operationId, refused);
          continue;
        }
      }
      const invocation = invocationOf(action, context.agent.id);
      if (action.toolName === "spawn_agent" && this.deps.spawn) {
        this.complete(action.operationId, await this.deps.spawn(context, action));
      } else if (AGENT_SIDE_TOOLS.has(action.toolName)) {
        this.complete(action.operationId, await executeAgentTool(this.deps.agentTools, action));
      } else if (tool!.sideEffects.kind === "none" || (action.envelope.previewOnly && !isTenantToolModelName(action.toolName))) {
        this.complete(action.operationId, await this.deps.executeTenantTool(invocation));
      } else {
        // ── Approval gate (helper "approvals", seed 002): the plan is persisted; a decision opens; the saga waits for it ──
        const approval = this.deps.approvalFor ? await this.deps.approvalFor(context, action, tool!, calls.find((call) => call.toolCallId === action.toolCallId)?.confidence) : null;
        if (approval) {
          this.deps.actions.setStatus(action.operationId, "awaiting_approval");
          await this.deps.startSaga(invocation, approval);
          waiting = true;
          continue;
        }
        // ── end approval gate ──
        this.deps.actions.setStatus(action.operationId, "executing");
        await this.deps.startSaga(invocation);
        waiting = true;
      }
    }
    // Read back, not remembered: a saga's report may have landed while this step awaited, and parking a run
    // whose calls are all settled would leave it waiting for a report that already came.
    return waiting && planned.some(({ action }) => isOutstanding(this.deps.actions.get(action.operationId)?.status)) ? "waiting" : "done";
  }

  /** Records a result once (phase 2, or a direct execution) and appends the toolResult message. */
  complete(operationId: string, result: ToolResultEnvelope): PlannedAction {
    const { action, changed } = this.deps.actions.complete(operationId, result);
    if (changed) {
      this.deps.history.append({
        id: toolMessageIds.result(operationId),
        threadId: this.threadOf(action),
        kind: "toolResult",
        content: result,
        runKey: action.runKey,
        metadata: { operationId, toolName: action.toolName, ok: result.ok, links: result.ok ? result.links : [] },
      });
      this.deps.events.append("tool.result", action.runKey, { operationId, toolName: action.toolName, ok: result.ok, ...(result.ok ? {} : { code: result.code }) });
    }
    return action;
  }

  private threadOf(action: PlannedAction): string {
    return this.deps.threadOfRun(action.runKey);
  }

  private planCall(context: StepContext, call: ToolCallRequest, callIndex: number, httpTools: HttpToolGate[]): { action: PlannedAction; refusal: ToolResultEnvelope | null; tool: GatedTool | null } {
    // Tenant HTTP tools are validated against their JSON Schema by the TenantDO executor.
    const tool: GatedTool | null = getTool(call.toolName) ?? httpTools.find((http) => http.name === call.toolName) ?? null;
    const parsed = tool && "outputSchema" in tool ? tool.inputSchema.safeParse(call.input) : null;
    const args = (parsed?.success ? parsed.data : isRecord(call.input) ? call.input : {}) as Record<string, unknown>;
    const plan = this.deps.actions.plan({
      runKey: context.runKey,
      step: context.step,
      callIndex,
      toolCallId: call.toolCallId,
      tool: tool ?? { name: safeName(call.toolName), ...UNKNOWN_TOOL },
      args,
      allowedCategoryIds: context.agent.allowedCategoryIds,
    });
    if (!plan.ok) throw Object.assign(new Error(plan.message), { code: plan.code });
    const { action, reused } = plan;
    if (!reused) {
      this.deps.history.append({
        id: toolMessageIds.action(action.operationId),
        threadId: context.threadId,
        kind: "action",
        content: action.envelope,
        runKey: context.runKey,
        metadata: { operationId: action.operationId, toolName: action.toolName, step: context.step },
      });
      this.deps.events.append("tool.called", context.runKey, { operationId: action.operationId, toolName: action.toolName, step: context.step, args: action.envelope.args });
    }
    const refuse = (code: string, message: string) => ({ action, tool, refusal: toolFailure(action.envelope, { actionRefId: action.operationId, code, message, retryable: false }) });
    if (!tool) return refuse("unknown_tool", `there is no tool named ${call.toolName}`);
    if (parsed && !parsed.success) return refuse("invalid_arguments", parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; "));
    const access = checkToolAccess(resolveAgentProfile(context.agent.kind, context.agent.config.capabilities ?? undefined), tool, context.reason);
    if (!access.allowed) return refuse(access.code, `${tool.name} is not allowed for this agent here (${access.code})`);
    return { action, tool, refusal: null };
  }

}

/**
 * A planned action as the TenantDO executes it. Built from the persisted plan only (its scope
 * snapshot included), so a recovered saga runs exactly what was planned.
 */
export function invocationOf(action: PlannedAction, agentId: string): ToolInvocation {
  return {
    operationId: action.operationId,
    agentId,
    runKey: action.runKey,
    toolName: isHttpModelName(action.toolName) ? httpInvocationName(action.toolName) : action.toolName,
    args: action.envelope.args as Record<string, unknown>,
    scope: { allowedCategoryIds: [...action.envelope.scopeSnapshot] },
    previewOnly: action.envelope.previewOnly,
  };
}

const isOutstanding = (status: string | undefined) => status === "executing" || status === "awaiting_approval";
const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === "object" && !Array.isArray(value);
const safeName = (name: string) => (/^[a-z][a-z0-9_]{0,63}$/.test(name) ? name : "invalid_tool_name");
