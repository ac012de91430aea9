import type { ActionStore } from "../tools";
import type { WakeInbox } from "./inbox";

export interface InterruptDeps {
  inbox: WakeInbox;
  actions: ActionStore;
  /** The TenantDO cancels these calls' unanswered approvals (resolvedBy `interrupted`) and wakes their sagas. */
  cancelApprovals(operationIds: string[]): Promise<unknown>;
}

/**
 * Double texting `interrupt` (issue 15 §4), the agent's side. A run is marked (its inbox row names the interrupting
 * turn), and the run loop ends it as `interrupted` at its next step boundary. Tool calls are never cut short: a
 * call awaiting approval has its decision cancelled (unless a person answered it first), so its saga reports a
 * `cancelled` result and the run resumes to that boundary; an approved or executing call finishes and is recorded.
 */
export class Interrupts {
  constructor(private readonly deps: InterruptDeps) {}

  /** Marks each run and cancels what it waits on; returns the runs this call marked. */
  async request(runKeys: ReadonlyArray<string>, by: string): Promise<string[]> {
    const marked = runKeys.filter((runKey) => this.deps.inbox.requestInterrupt(runKey, by));
    await this.cancelPendingApprovals(marked);
    return marked;
  }

  /** The interrupting turn of `runKey`, or null. */
  of(runKey: string): string | null {
    return this.deps.inbox.interruptOf(runKey);
  }

  /** A marked run that just parked on new approvals (its step was under way when the mark came) releases them too. */
  async onParked(runKey: string): Promise<void> {
    if (this.of(runKey)) await this.cancelPendingApprovals([runKey]);
  }

  private async cancelPendingApprovals(runKeys: ReadonlyArray<string>): Promise<void> {
    if (runKeys.length === 0) return;
    const runs = new Set(runKeys);
    const operationIds = this.deps.actions.inFlight().filter((action) => runs.has(action.runKey) && action.status === "awaiting_approval").map((action) => action.operationId);
    if (operationIds.length > 0) await this.deps.cancelApprovals(operationIds);
  }
}
