import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import type { ToolResultEnvelope } from "../core/tool-envelopes";
import type { Env } from "../env";
import { agentStub, tenantStub } from "../objects/stubs";
import type { ToolInvocation } from "../tools/invocation";

export interface ToolSagaParams {
  tenantId: string;
  agentId: string;
  invocation: ToolInvocation;
  /** Test-only crash points, honoured only when VIGIL_FAULTS=enabled. */
  faults?: string[];
}

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
    const faults = new Set(this.env.VIGIL_FAULTS === "enabled" ? (event.payload.faults ?? []) : []);
    const crashOnFirstAttempt = (point: string, attempt: number) => {
      if (faults.has(point) && attempt === 1) throw new Error(`injected crash at ${point}`);
    };

    // Step results cross as JSON text: the envelope's recursive JSON type is too deep for Rpc.Serializable.
    const applied = await step.do("phase1:apply", RETRY, async (ctx) => {
      crashOnFirstAttempt("saga.phase1.beforeApply", ctx.attempt);
      const envelope = await tenantStub(this.env, tenantId).executeTool(invocation);
      crashOnFirstAttempt("saga.phase1.afterApply", ctx.attempt);
      return JSON.stringify(envelope);
    });
    const result = JSON.parse(applied) as ToolResultEnvelope;

    await step.do("phase-boundary", RETRY, async (ctx) => {
      crashOnFirstAttempt("saga.betweenPhases", ctx.attempt);
      return true;
    });

    await step.do("phase2:record", RETRY, async (ctx) => {
      crashOnFirstAttempt("saga.phase2.beforeRecord", ctx.attempt);
      await agentStub(this.env, tenantId, agentId).recordToolResult(invocation.operationId, result);
      crashOnFirstAttempt("saga.phase2.afterRecord", ctx.attempt);
      return true;
    });
    return result;
  }
}
