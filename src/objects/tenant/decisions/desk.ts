import { inWidgetThread } from "../../../core/runtime/widget-session";
import { mayAnswer } from "../../../core/governance/decision-answerers";
import type { Result } from "../../../core/runtime/result";
import type { Page } from "../../../schema/common";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { BrakeDecisionOutcome } from "./brake-decisions";
import type { DecisionRecord, Decisions, ResolveBody, ResolveOutcome } from "./decisions";
import type { DecisionResolution } from "./resolution";

export interface DecisionListQuery {
  limit: number;
  cursor?: string | undefined;
  status?: string | undefined;
  agentId?: string | undefined;
  type?: string | undefined;
  agentIds?: string[] | undefined;
  widgetNamespace?: string | undefined;
}

export interface DecisionDeskDeps {
  decisions: Decisions;
  resolution: DecisionResolution;
  /** The tenant policy's `visitorApprovableTools`: the tools whose approvals a visitor may answer. */
  visitorApprovableTools(): ReadonlyArray<string>;
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void;
}

/** The decisions a person sees and answers (`GET /v1/decisions`, `POST /v1/decisions/:id`). */
export class DecisionDesk {
  constructor(private readonly deps: DecisionDeskDeps) {}

  /** Tenant-wide, newest first; `agentIds` narrows to a widget token's agents. */
  list(query: DecisionListQuery): Result<Page<DecisionRecord>> {
    return cursorPage(query.cursor, textKeyCursor, (before) => {
      const page = this.deps.decisions.page({ limit: query.limit, status: query.status, agentId: query.agentId, type: query.type, before, agentIds: query.agentIds, widgetNamespace: query.widgetNamespace });
      return { data: page.data, last: page.last ? { c: page.last.createdAt, i: page.last.id } : null };
    });
  }

  /**
   * Who may answer is explicit (core/governance/decision-answerers.ts): an operator any decision; a visitor (a widget
   * namespace) one of their own sessions', a tool approval only for a visitor-approvable tool. A refusal is audited.
   * The asking agent, the waiting saga or the brake hears of an answer (./resolution.ts).
   */
  resolve(actor: string, id: string, body: ResolveBody, visibleAgents?: string[], widgetNamespace?: string): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    if (widgetNamespace !== undefined) {
      const refused = this.visitorRefusal(actor, id, body, widgetNamespace);
      if (refused) return Promise.resolve(refused);
    }
    return this.deps.resolution.resolve(actor, id, body, visibleAgents);
  }

  private visitorRefusal(actor: string, id: string, body: ResolveBody, widgetNamespace: string): ResolveOutcome | null {
    const row = this.deps.decisions.get(id);
    const threadId = typeof row?.payload.threadId === "string" ? row.payload.threadId : null;
    const verdict = mayAnswer({
      answerer: "visitor",
      decisionType: row?.type ?? "",
      toolName: typeof row?.payload.toolName === "string" ? row.payload.toolName : undefined,
      inOwnSession: row !== null && inWidgetThread(widgetNamespace, [row.agentId], threadId),
      resolutionType: body.resolutionType,
      alwaysApprove: body.alwaysApprove === true,
      visitorApprovableTools: this.deps.visitorApprovableTools(),
    });
    if (verdict.kind === "allowed") return null;
    if (verdict.kind === "absent" || !row) return { ok: false, code: "not_found", message: "decision not found" };
    // Only pending approvals are worth a row: a repeat on a settled one changes nothing and says so below.
    if (row.status === "pending") {
      this.deps.audit(actor, "decision.refused", id, { agentId: row.agentId, toolName: row.payload.toolName, reason: verdict.reason, authority: "external_evidence", trust: "untrusted_external" });
    }
    return { ok: false, code: "forbidden", message: verdict.message };
  }
}
