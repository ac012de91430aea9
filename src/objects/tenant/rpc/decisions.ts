import { inWidgetThread } from "../../../core/widget-session";
import type { Result } from "../../../http/error-codes";
import type { Page } from "../../../schema/common";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { BrakeDecisionOutcome } from "../decisions/brake-decisions";
import type { DecisionHoldFilter, DecisionRecord, QuestionRequest, ResolveBody, ResolveOutcome } from "../decisions/decisions";
import type { ApprovalAnswer, ApprovalRequest, ApprovalState } from "../decisions/tool-approvals";
import { TenantGovernanceRpc } from "./governance";

/** Decisions a person answers: agents' ask_user questions, tool approvals (seed 002) and brakes' keep-or-release choices. */
export class TenantDecisionsRpc extends TenantGovernanceRpc {
  /** Opens the decision for an agent's ask_user call (idempotent by operationId). */
  openQuestion(request: QuestionRequest): string {
    return this.parts.decisions.openQuestion(request);
  }

  /** `GET /v1/decisions`: tenant-wide, newest first; `agentIds` narrows to a widget token's agents. */
  listDecisions(query: { limit: number; cursor?: string | undefined; status?: string | undefined; agentId?: string | undefined; type?: string | undefined; agentIds?: string[] | undefined; widgetNamespace?: string | undefined }): Result<Page<DecisionRecord>> {
    return cursorPage(query.cursor, textKeyCursor, (before) => {
      const page = this.parts.decisions.page({ limit: query.limit, status: query.status, agentId: query.agentId, type: query.type, before, agentIds: query.agentIds, widgetNamespace: query.widgetNamespace });
      return { data: page.data, last: page.last ? { c: page.last.createdAt, i: page.last.id } : null };
    });
  }

  /** A person resolves a decision; the asking agent, the waiting saga or the brake hears of it (src/objects/tenant/decision-resolution.ts). */
  resolveDecision(actor: string, id: string, body: ResolveBody, visibleAgents?: string[], widgetNamespace?: string): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    // A widget token answers only decisions of its own conversations; any other looks absent.
    if (widgetNamespace !== undefined) {
      const row = this.parts.decisions.get(id);
      if (!row || !inWidgetThread(widgetNamespace, [row.agentId], typeof row.payload.threadId === "string" ? row.payload.threadId : null)) {
        return Promise.resolve({ ok: false, code: "not_found", message: "decision not found" });
      }
    }
    return this.parts.decisionResolution.resolve(actor, id, body, visibleAgents);
  }

  /** Before a mutating call's saga starts: does it need a person? Opens the decision once (by operationId). Trust never leaves. */
  requestToolApproval(request: ApprovalRequest): ApprovalAnswer {
    return this.parts.approvals.request(request);
  }

  /** The waiting saga reads its decision (JSON text: workflow step results must serialise shallowly). */
  toolApprovalState(decisionId: string): string {
    return JSON.stringify(this.parts.approvals.state(decisionId) satisfies ApprovalState);
  }

  /** The saga's wait ran out: apply the decision's timeout policy if it is due (recorded in the audit log). */
  toolApprovalTimedOut(decisionId: string): string {
    return JSON.stringify(this.parts.approvals.timedOut(decisionId) satisfies ApprovalState);
  }

  /** Test seam (VIGIL_FAULTS=enabled only): this tenant's decision tick length in ms (null: config default). */
  setDecisionTickMs(ms: number | null): boolean {
    if (this.env.VIGIL_FAULTS !== "enabled") return false;
    this.parts.approvals.setTickMs(ms);
    return true;
  }

  /** A brake holds back the pending decisions it covers (status `suspended`); brake decisions themselves are never held. */
  suspendPendingDecisions(filter: DecisionHoldFilter): number {
    return this.parts.decisions.suspendPending(filter);
  }

  resumeSuspendedDecisions(filter: DecisionHoldFilter): number {
    return this.parts.decisions.resumeSuspended(filter);
  }
}
