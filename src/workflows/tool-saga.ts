import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { NonRetryableError } from "cloudflare:workflows";
import { config } from "../config";
import { seamOn } from "../core/runtime/seams";
import type { ToolResultEnvelope } from "../core/tools/tool-envelopes";
import type { Env } from "../env";
import { agentStub, tenantStub } from "../objects/shared/stubs";
import type { ApprovalState } from "../schema/contracts";
import type { ToolInvocation } from "../tools/invocation";

export interface ToolSagaParams {
  tenantId: string;
  agentId: string;
  invocation: ToolInvocation;
  /** Test-only crash points, honoured only when the `faults` seam is on. */
  faults?: string[];
  /** Seed 002 tool approval: wait for this decision before phase 1. */
  approval?: { decisionId: string };
}

/** The event a resolve (or a brake's release) sends to a waiting saga; it only says "read your decision again". */
export const DECISION_EVENT = "decision";
/** Waits are re-armed, never unbounded: a decision without a timeout re-checks at this interval. */
const MAX_ROUNDS = 10_000;

/** Step retries: a crashed step is re-run; phase 1 is idempotent by operationId, phase 2 likewise. */
const RETRY = { retries: { limit: 5, delay: 500, backoff: "exponential" as const }, timeout: "2 minutes" as const };

/**
 * One mutating tool call as a saga (seed 000 §4.6, seed 001 §7); the instance id is its operationId.
 * Phase 1 applies the journal mutation in the TenantDO, phase 2 records the toolResult in the
 * AgentDO, which continues the run. Workflows persist each completed step, so a crash between
 * phases resumes at phase 2 without re-applying phase 1; a crash inside a step re-runs the step,
 * and the operationId makes that converge on exactly one mutation.
 */
export class ToolSagaWorkflow extends WorkflowEntrypoint<Env, ToolSagaParams> {
  override async run(event: WorkflowEvent<ToolSagaParams>, step: WorkflowStep): Promise<ToolResultEnvelope> {
    const { tenantId, agentId, invocation } = event.payload;
    const faults = new Set(seamOn(this.env, "faults") ? (event.payload.faults ?? []) : []);
    const crashOnFirstAttempt = (point: string, attempt: number) => {
      if (faults.has(point) && attempt === 1) throw new Error(`injected crash at ${point}`);
    };
    // "Retries exhausted" without waiting them out: the step gives up at once and the instance errors.
    const exhaust = (point: string) => {
      if (faults.has(point)) throw new NonRetryableError(`injected failure at ${point}: retries exhausted`);
    };

    // An instance whose process died with it: it reports itself under way and never moves again (the agent settles it).
    const stall = async (point: string) => {
      if (faults.has(point)) await step.sleep(`stall:${point}`, "1 day");
    };

    // ── Approval (seed 002): wait for the decision; a timeout applies its policy in the TenantDO, deterministically ──
    let execute = invocation;
    if (event.payload.approval) {
      const { decisionId } = event.payload.approval;
      const tenant = () => tenantStub(this.env, tenantId);
      let outcome = JSON.parse(await step.do("approval:check", RETRY, async () => tenant().toolApprovalState(decisionId))) as ApprovalState;
      for (let round = 0; outcome.state === "pending" && round < MAX_ROUNDS; round++) {
        const waitMs = Math.min(outcome.waitMs, config.decisions.idleWaitMs);
        try {
          await step.waitForEvent(`approval:wait:${round}`, { type: DECISION_EVENT, timeout: waitMs });
          outcome = JSON.parse(await step.do(`approval:read:${round}`, RETRY, async () => tenant().toolApprovalState(decisionId))) as ApprovalState;
        } catch (error) {
          if (!isTimeout(error)) throw error;
          outcome = JSON.parse(await step.do(`approval:timeout:${round}`, RETRY, async () => tenant().toolApprovalTimedOut(decisionId))) as ApprovalState;
        }
      }
      const recorded = await step.do("approval:record", RETRY, async () => {
        const answer = await agentStub(this.env, tenantId, agentId).recordApproval(invocation.operationId, JSON.stringify(outcome));
        if (!answer.ok) throw new Error(`recording the approval failed: ${answer.code}`);
        return answer.refusal ?? "";
      });
      if (recorded) return JSON.parse(recorded) as ToolResultEnvelope;
      if (outcome.state === "approved" && outcome.modifiedArgs) execute = { ...invocation, args: outcome.modifiedArgs };
    }

    await stall("saga.stall.beforeApply");
    // Step results cross as JSON text: the envelope's recursive JSON type is too deep for Rpc.Serializable.
    const applied = await step.do("phase1:apply", RETRY, async (ctx) => {
      exhaust("saga.phase1.exhausted");
      crashOnFirstAttempt("saga.phase1.beforeApply", ctx.attempt);
      const envelope = await tenantStub(this.env, tenantId).executeTool(execute);
      crashOnFirstAttempt("saga.phase1.afterApply", ctx.attempt);
      return JSON.stringify(envelope);
    });
    const result = JSON.parse(applied) as ToolResultEnvelope;
    await stall("saga.stall.afterApply");

    await step.do("phase-boundary", RETRY, async (ctx) => {
      crashOnFirstAttempt("saga.betweenPhases", ctx.attempt);
      return true;
    });

    await step.do("phase2:record", RETRY, async (ctx) => {
      exhaust("saga.phase2.exhausted");
      crashOnFirstAttempt("saga.phase2.beforeRecord", ctx.attempt);
      await agentStub(this.env, tenantId, agentId).recordToolResult(invocation.operationId, result);
      crashOnFirstAttempt("saga.phase2.afterRecord", ctx.attempt);
      return true;
    });
    return result;
  }
}

/** Workflows reject a timed-out `waitForEvent` with an error named for the timeout. */
function isTimeout(error: unknown): boolean {
  const text = `${(error as Error)?.name ?? ""} ${(error as Error)?.message ?? ""}`;
  return /timeout|timed out/i.test(text);
}
