import { inWidgetThread } from "../../../core/runtime/widget-session";
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

/** The decisions a person sees and answers (`GET /v1/decisions`, `POST /v1/decisions/:id`). */
export class DecisionDesk {
  constructor(private readonly deps: { decisions: Decisions; resolution: DecisionResolution }) {}

  /** Tenant-wide, newest first; `agentIds` narrows to a widget token's agents. */
  list(query: DecisionListQuery): Result<Page<DecisionRecord>> {
    return cursorPage(query.cursor, textKeyCursor, (before) => {
      const page = this.deps.decisions.page({ limit: query.limit, status: query.status, agentId: query.agentId, type: query.type, before, agentIds: query.agentIds, widgetNamespace: query.widgetNamespace });
      return { data: page.data, last: page.last ? { c: page.last.createdAt, i: page.last.id } : null };
    });
  }

  /** The asking agent, the waiting saga or the brake hears of it (./resolution.ts). */
  resolve(actor: string, id: string, body: ResolveBody, visibleAgents?: string[], widgetNamespace?: string): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    // A widget token answers only decisions of its own conversations; any other looks absent.
    if (widgetNamespace !== undefined) {
      const row = this.deps.decisions.get(id);
      if (!row || !inWidgetThread(widgetNamespace, [row.agentId], typeof row.payload.threadId === "string" ? row.payload.threadId : null)) {
        return Promise.resolve({ ok: false, code: "not_found", message: "decision not found" });
      }
    }
    return this.deps.resolution.resolve(actor, id, body, visibleAgents);
  }
}
