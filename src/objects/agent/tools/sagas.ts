import { eq } from "drizzle-orm";
import { config } from "../../../config";
import { approvalDecisionId } from "../../../core/governance/approval-facts";
import { toolFailure, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import * as schema from "../../../db/agent-schema";
import type { Env } from "../../../env";
import { failure, type Result } from "../../../core/runtime/result";
import type { ToolInvocation } from "../../../tools/invocation";
import type { ToolSagaParams } from "../../../workflows/tool-saga";
import type { ApprovalState } from "../../../schema/contracts";
import { nowIso } from "../../shared/sqlite";
import type { ActionStore, PlannedAction } from "./actions";
import type { EventLog } from "../events";
import type { RunTrace } from "../runs";
import type { AgentDb } from "../types";
import { invocationOf, type ToolRunner } from "./runner";
import type { WakeInbox } from "../wakes";

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
  /** Test-only crash points handed to the saga (empty unless the `faults` seam is on). */
  takeFaults(): string[];
  /** Test seam (VIGIL_FAULTS only): true drops the instance before it is created, as a crash right there would. */
  dropInstance(): boolean;
  /** Phase 1 in the TenantDO, idempotent by operationId: a replay answers the recorded envelope. */
  executeTool(invocation: ToolInvocation): Promise<ToolResultEnvelope>;
  /** The tenant's current answer to a tool approval decision. */
  approvalState(decisionId: string): Promise<ApprovalState>;
  /** Keeps (or drops) the interval alarm that re-checks sagas while any call waits on one. */
  watch(): Promise<void>;
  unwatch(): Promise<void>;
  /** Restarts the drain once a parked run is ready again. */
  resume(): void;
}

/** The agent's side of tool sagas: start an instance per mutating call, take phase 2, re-drive lost ones. */
export class Sagas {
  /** The watch arm/disarm passes, one after another (see syncWatch). */
  private watchSync: Promise<void> = Promise.resolve();

  constructor(private readonly deps: SagaDeps) {}

  /**
   * Arms the saga watch while any call is out and drops it once none is. Passes run one at a time and each
   * decides on the state it runs in, not the state its caller saw: an arm decided before a saga recorded its
   * result and landing after the disarm would otherwise leave the watch running with nothing to watch.
   */
  private syncWatch(): Promise<void> {
    this.watchSync = this.watchSync
      .then(() => (this.deps.actions.inFlight().length > 0 ? this.deps.watch() : this.deps.unwatch()))
      .catch(() => undefined);
    return this.watchSync;
  }

  async start(invocation: ToolInvocation, approval?: { decisionId: string }): Promise<void> {
    const params: ToolSagaParams = { tenantId: this.deps.tenantId(), agentId: invocation.agentId, invocation, faults: this.deps.takeFaults(), ...(approval ? { approval } : {}) };
    // Armed before the instance exists: whatever happens to it from here, the watch finds it.
    await this.syncWatch();
    this.deps.trace.saga(invocation.runKey, { operationId: invocation.operationId, phase: "started", approval: approval !== undefined });
    if (this.deps.dropInstance()) return;
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
    const startedAt = Date.now();
    const before = action.status;
    this.deps.tools.complete(operationId, result);
    if (before === "executing" || before === "awaiting_approval") this.deps.trace.saga(action.runKey, { operationId, phase: "recorded", durationMs: Date.now() - startedAt });
    const outstanding = actions.forStep(action.runKey, action.step).some((a) => a.status === "executing" || a.status === "awaiting_approval");
    const resumed = !outstanding && inbox.unpark(action.runKey);
    // The run resumes once the watch has caught up, so a settled run never leaves a watch behind it.
    const watchSettled = this.syncWatch();
    if (resumed) void watchSettled.then(() => this.deps.resume());
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
    this.deps.trace.saga(action.runKey, { operationId, phase: "approval_resolved", outcome: resolutionType });
    if (outcome.state === "approved") {
      this.deps.actions.setStatus(operationId, "executing");
      return { ok: true, recorded: true, refusal: null };
    }
    const refusal = toolFailure(action.envelope, { actionRefId: operationId, code: outcome.code, message: outcome.message, retryable: false, details: { decisionId: outcome.decisionId } });
    this.record(operationId, refusal);
    // Crosses as JSON text, like every saga step result (Rpc.Serializable depth).
    return { ok: true, recorded: true, refusal: JSON.stringify(refusal) };
  }

  /**
   * Destroy means stop: every call still out ends now with a `cancelled` toolResult (the first record
   * wins, so a saga reporting later changes nothing), and its run, unparked, settles as skipped_destroyed.
   */
  async cancelAll(reason: string, message: string): Promise<number> {
    const out = this.deps.actions.inFlight();
    for (const action of out) {
      this.record(action.operationId, toolFailure(action.envelope, { actionRefId: action.operationId, code: "cancelled", message, retryable: false, details: { reason } }));
    }
    await this.syncWatch();
    return out.length;
  }

  /** How a call's approval was answered (null: it needed none, or is still waiting). */
  approvalOf(operationId: string): typeof schema.actionApprovals.$inferSelect | null {
    return this.deps.db.select().from(schema.actionApprovals).where(eq(schema.actionApprovals.operationId, operationId)).get() ?? null;
  }

  /**
   * Sagas started but never reported back, brought to an end (seed 001's saga convergence), without relying on the
   * Workflows engine to resume its own instances after a crash: a finished instance's output is recorded; a lost one
   * (never created, or gone) is created again (idempotent by operationId); an errored or terminated one, and one still
   * "running" that may have died with its process (`stalled`), is settled here, inline: its approval is read from the
   * tenant and phase 1 is asked again, which answers the recorded envelope if it applied and applies it once if not,
   * and that result is recorded. A run left `waiting` with none of its calls out resumes. `trigger`: "activation" (the
   * object restarted: an instance's progress is not trusted) or "watch" (the interval alarm: a call out for longer than
   * one watch interval is). Any number of passes, concurrent with the instance or not, yield exactly one mutation per
   * operation (phase 1 is idempotent by operationId; the first record wins).
   */
  async recover(trigger: "activation" | "watch" = "watch"): Promise<number> {
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
        const settled = await this.settleInline(action.operationId);
        // Still waiting for a person: the instance goes back to waiting (it applies the decision's timeout policy).
        if (settled === "pending") await instance.restart().catch(() => undefined);
        if (settled !== "settled") continue;
      } else if (this.stalled(action, trigger)) {
        // A live instance that also gets there records nothing new (the first record wins).
        if ((await this.settleInline(action.operationId)) !== "settled") continue;
      } else continue;
      recovered++;
    }
    recovered += this.resumeSettled();
    await this.syncWatch();
    return recovered;
  }

  /** Whether a call whose instance still reports itself under way is settled by the agent now (see `recover`). */
  private stalled(action: PlannedAction, trigger: "activation" | "watch"): boolean {
    return trigger === "activation" || Date.now() - Date.parse(action.updatedAt) >= config.run.sagaWatchSeconds * 1000;
  }

  /**
   * What the saga would have done, done by the agent (its instance has ended without reporting). A
   * still-pending decision ("pending") or an unreachable tenant leaves the call out for the next pass.
   */
  private async settleInline(operationId: string): Promise<"settled" | "pending" | "unreachable"> {
    let action = this.deps.actions.get(operationId);
    if (!action || (action.status !== "executing" && action.status !== "awaiting_approval")) return "settled";
    try {
      if (action.status === "awaiting_approval") {
        const outcome = await this.deps.approvalState(approvalDecisionId(operationId));
        if (outcome.state === "pending") return "pending";
        this.recordApproval(operationId, outcome);
        action = this.deps.actions.get(operationId)!;
        if (action.status !== "executing") return "settled";
      }
      const modifiedArgs = this.approvalOf(operationId)?.modifiedArgs;
      const invocation = invocationOf(action, this.deps.agentId());
      const result = await this.deps.executeTool(modifiedArgs ? { ...invocation, args: modifiedArgs as Record<string, unknown> } : invocation);
      this.record(operationId, result);
      return "settled";
    } catch {
      return "unreachable";
    }
  }

  /** Runs parked on a step none of whose calls is still out (a report that raced the park, or a settled call). */
  private resumeSettled(): number {
    let resumed = 0;
    for (const runKey of this.deps.inbox.parkedRunKeys()) {
      if (this.deps.actions.outstandingFor(runKey)) continue;
      if (this.deps.inbox.unpark(runKey)) resumed++;
    }
    if (resumed > 0) this.deps.resume();
    return resumed;
  }
}
