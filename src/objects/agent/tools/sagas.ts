import { eq } from "drizzle-orm";
import { approvalDecisionId } from "../../../core/approval-facts";
import { toolFailure, type ToolResultEnvelope } from "../../../core/tool-envelopes";
import * as schema from "../../../db/agent-schema";
import type { Env } from "../../../env";
import { failure, type Result } from "../../../core/result";
import type { ToolInvocation } from "../../../tools/invocation";
import type { ToolSagaParams } from "../../../workflows/tool-saga";
import type { ApprovalState } from "../../../schema/contracts";
import { nowIso } from "../../shared/sqlite";
import type { ActionStore } from "./actions";
import type { EventLog } from "../events/event-log";
import type { RunTrace } from "../runs/run-trace";
import type { AgentDb } from "../types";
import { invocationOf, type ToolRunner } from "./runner";
import type { WakeInbox } from "../wakes/inbox";

export interface SagaDeps {
  env: Env;
  db: AgentDb;
  events: EventLog;
  trace: RunTrace;
  actions: ActionStore;
  tools: ToolRunner;
  inbox: WakeInbox;
  tenantId(): string;
  agentId(): string;
  /** Test-only crash points handed to the saga (empty unless VIGIL_FAULTS=enabled). */
  takeFaults(): string[];
  /** Restarts the drain once a parked run is ready again. */
  resume(): void;
}

/** The agent's side of tool sagas: start an instance per mutating call, take phase 2, re-drive lost ones. */
export class Sagas {
  constructor(private readonly deps: SagaDeps) {}

  async start(invocation: ToolInvocation, approval?: { decisionId: string }): Promise<void> {
    const params: ToolSagaParams = { tenantId: this.deps.tenantId(), agentId: invocation.agentId, invocation, faults: this.deps.takeFaults(), ...(approval ? { approval } : {}) };
    try {
      await this.deps.env.TOOL_SAGA.create({ id: invocation.operationId, params });
    } catch (error) {
      // The instance id is the operationId: an existing instance is this same saga, already under way.
      if (!/already exists|duplicate/i.test(String(error))) throw error;
    }
  }

  /** Phase 2: records the result once and resumes the run when none of its step's calls is still out. */
  record(operationId: string, result: ToolResultEnvelope): Result<{ resumed: boolean }> {
    const { actions, inbox } = this.deps;
    const action = actions.get(operationId);
    if (!action) return failure("not_found", "unknown operation");
    this.deps.tools.complete(operationId, result);
    const outstanding = actions.forStep(action.runKey, action.step).some((a) => a.status === "executing" || a.status === "awaiting_approval");
    const resumed = !outstanding && inbox.unpark(action.runKey);
    if (resumed) this.deps.resume();
    return { ok: true, resumed };
  }

  /**
   * The saga's decision came back (any number of times; the first record wins). The plan records how it
   * was answered, modified args included, before phase 1 runs; a rejection becomes the call's toolResult
   * (`rejected`, or `cancelled` by a timeout) and the run resumes.
   */
  recordApproval(operationId: string, outcome: ApprovalState): Result<{ recorded: boolean; refusal: string | null }> {
    const action = this.deps.actions.get(operationId);
    if (!action) return failure("not_found", "unknown operation");
    if (outcome.state === "pending") return failure("validation_failed", "the decision is still pending");
    if (action.status !== "awaiting_approval") return { ok: true, recorded: false, refusal: action.result && !action.result.ok ? JSON.stringify(action.result) : null };
    const resolutionType = outcome.state === "approved" ? outcome.resolutionType : outcome.code;
    const modifiedArgs = outcome.state === "approved" ? outcome.modifiedArgs : null;
    this.deps.db
      .insert(schema.actionApprovals)
      .values({ operationId, decisionId: outcome.decisionId, resolutionType, modifiedArgs, resolvedBy: outcome.resolvedBy, recordedAt: nowIso() })
      .onConflictDoNothing()
      .run();
    this.deps.events.append("decision.resolved", action.runKey, { decisionId: outcome.decisionId, kind: "tool_approval", operationId, toolName: action.toolName, resolutionType, resolvedBy: outcome.resolvedBy, ...(modifiedArgs ? { modifiedArgs } : {}) });
    this.deps.trace.policy(action.runKey, { gate: "approval", outcome: outcome.state === "rejected" ? "rejected" : modifiedArgs ? "modified" : "approved", subject: action.toolName, detail: { decisionId: outcome.decisionId, resolvedBy: outcome.resolvedBy } });
    if (outcome.state === "approved") {
      this.deps.actions.setStatus(operationId, "executing");
      return { ok: true, recorded: true, refusal: null };
    }
    const refusal = toolFailure(action.envelope, { actionRefId: operationId, code: outcome.code, message: outcome.message, retryable: false, details: { decisionId: outcome.decisionId } });
    this.record(operationId, refusal);
    // Crosses as JSON text, like every saga step result (Rpc.Serializable depth).
    return { ok: true, recorded: true, refusal: JSON.stringify(refusal) };
  }

  /** How a call's approval was answered (null: it needed none, or is still waiting). */
  approvalOf(operationId: string): typeof schema.actionApprovals.$inferSelect | null {
    return this.deps.db.select().from(schema.actionApprovals).where(eq(schema.actionApprovals.operationId, operationId)).get() ?? null;
  }

  /**
   * Sagas started but never reported back: a finished instance's output is recorded, an errored or
   * lost one is restarted or re-created. Phase 1 is idempotent by operationId, so running this any
   * number of times still yields exactly one mutation.
   */
  async recover(): Promise<number> {
    let recovered = 0;
    for (const action of this.deps.actions.inFlight()) {
      const instance = await this.deps.env.TOOL_SAGA.get(action.operationId).catch(() => null);
      const status = instance ? await instance.status().catch(() => null) : null;
      if (!instance || !status) {
        const approval = action.status === "awaiting_approval" ? { decisionId: approvalDecisionId(action.operationId) } : undefined;
        await this.start(invocationOf(action, this.deps.agentId()), approval);
      } else if (status.status === "complete" && status.output) {
        this.record(action.operationId, status.output as ToolResultEnvelope);
      } else if (status.status === "errored" || status.status === "terminated") {
        await instance.restart();
      } else continue;
      recovered++;
    }
    return recovered;
  }
}
