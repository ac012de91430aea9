import type { ControlMode } from "../../../core/governance/escalation";
import type { RiskLevel } from "../../../core/tools/tool-envelopes";
import type { ApprovalAnswer, ApprovalRequest } from "../../../schema/contracts";
import type { PlannedAction } from "./actions";
import type { EventLog } from "../events";
import { invocationOf, type StepContext } from "./runner";
import type { RunTrace } from "../runs";

export interface ApprovalGateDeps {
  events: EventLog;
  trace: RunTrace;
  /** The TenantDO's `requestToolApproval` (it alone holds trust, grants and the policy). */
  request(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

/** What the gate needs of the tool: its declared risk and the kind of effect it has. */
export interface GatedToolFacts {
  riskLevel: RiskLevel | string;
  sideEffects: { kind: string };
}

/**
 * The agent's half of seed 002 tool approval, asked before a mutating call's saga starts. The
 * answer is only "needed (decision id)" or "not needed (reason)": no score crosses back, so nothing
 * the agent or its model can see depends on trust except which calls wait for a person.
 */
export class ApprovalGate {
  constructor(private readonly deps: ApprovalGateDeps) {}

  /** Returns the decision to wait for, or null when the call may proceed. */
  async check(context: StepContext, action: PlannedAction, tool: GatedToolFacts, confidence?: number): Promise<{ decisionId: string } | null> {
    const invocation = invocationOf(action, context.agent.id);
    const answer = await this.deps.request({
      agentId: context.agent.id,
      controlMode: (context.agent.config.controlMode ?? "adaptive") as ControlMode,
      operationId: action.operationId,
      runKey: context.runKey,
      threadId: context.threadId,
      toolName: invocation.toolName,
      riskLevel: tool.riskLevel,
      sideEffectKind: tool.sideEffects.kind,
      args: invocation.args,
      ...(confidence === undefined ? {} : { confidence }),
      inputTrust: context.inputTrust,
    });
    if (!answer.required) {
      if (answer.reason === "session_always_approved") this.deps.trace.policy(context.runKey, { gate: "approval", outcome: "approved", subject: invocation.toolName, detail: { reason: answer.reason } });
      return null;
    }
    if (action.status === "planned") {
      this.deps.trace.policy(context.runKey, { gate: "approval", outcome: "approval_required", subject: invocation.toolName, detail: { decisionId: answer.decisionId } });
      this.deps.events.append("decision.requested", context.runKey, { decisionId: answer.decisionId, kind: "tool_approval", operationId: action.operationId, toolName: invocation.toolName, riskLevel: tool.riskLevel });
    }
    return { decisionId: answer.decisionId };
  }
}
