import type { ToolResultEnvelope } from "../../core/tool-envelopes";
import type { Env } from "../../env";
import { failure, type Result } from "../../http/error-codes";
import type { ToolInvocation } from "../../tools/invocation";
import type { ToolSagaParams } from "../../workflows/tool-saga";
import type { ActionStore } from "./actions";
import { invocationOf, type ToolRunner } from "./tool-runner";
import type { WakeInbox } from "./wake-inbox";

export interface SagaDeps {
  env: Env;
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

  async start(invocation: ToolInvocation): Promise<void> {
    const params: ToolSagaParams = { tenantId: this.deps.tenantId(), agentId: invocation.agentId, invocation, faults: this.deps.takeFaults() };
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
        await this.start(invocationOf(action, this.deps.agentId()));
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
