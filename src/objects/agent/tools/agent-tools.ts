import type { ExtensionSlotRegistry } from "../../../core/memory/extension-slots";
import type { ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import { toolFailure, toolSuccess } from "../../../core/tools/tool-envelopes";
import type { PlannedAction } from "./actions";
import type { EventLog } from "../events";
import type { AgentProfile } from "../lifecycle";
import { type RecallHit, type Reports, writeSlot } from "../memory";

/** Tools whose effects live in the agent itself, executed inside the AgentDO (no saga needed). */
export const AGENT_SIDE_TOOLS = new Set(["memory_search", "memory_update_slot", "publish_report", "ask_user", "sleep"]);

export interface AgentToolDeps {
  profile: AgentProfile;
  events: EventLog;
  reports: Reports;
  /** FTS5 recall over the agent's own messages (null: nothing searchable in the query). */
  recall(query: string, options: { limit: number; threadId?: string | undefined }): RecallHit[] | null;
  /** The tenant's registered extension slot keys (read when a call writes `extension`). */
  extensionSlots(): Promise<ExtensionSlotRegistry>;
  /** The thread a run belongs to (for `currentThreadOnly`). */
  threadOfRun(runKey: string): string;
  /** Opens a tenant-wide decision (ask_user) and returns its id; idempotent by operationId. */
  openQuestion(request: { operationId: string; runKey: string; question: string; options: unknown[]; recommendedOptionId?: string; allowFreeText: boolean }): Promise<string>;
}

export async function executeAgentTool(deps: AgentToolDeps, action: PlannedAction): Promise<ToolResultEnvelope> {
  const args = action.envelope.args as Record<string, unknown>;
  const ref = { actionRefId: action.operationId };
  switch (action.toolName) {
    case "sleep": {
      const until = typeof args.until === "string" ? new Date(args.until).toISOString() : new Date(Date.now() + Number(args.durationSeconds) * 1000).toISOString();
      const state = deps.profile.sleepUntil(until);
      deps.events.append("state.changed", action.runKey, { state });
      return toolSuccess(action.envelope, { ...ref, output: { sleepUntil: until }, links: [{ relation: "tool_effect", target: { type: "agent_state", id: "state" }, effect: "updated" }] });
    }
    case "memory_update_slot": {
      // The API's write (src/objects/agent/memory.ts), so both writers validate `extension` keys against one registry check.
      const slot = String(args.slot);
      const registry = slot === "extension" ? await deps.extensionSlots() : {};
      const update = writeSlot(deps.profile, deps.events, slot, args.value, typeof args.expectedVersion === "number" ? args.expectedVersion : undefined, { registry, runKey: action.runKey });
      if (!update.ok) return toolFailure(action.envelope, { ...ref, code: update.code, message: update.message, retryable: false });
      return toolSuccess(action.envelope, { ...ref, output: { slot: update.slot, version: update.version, changed: update.changed } });
    }
    case "memory_search": {
      const limit = typeof args.limit === "number" ? args.limit : 5;
      const threadId = args.currentThreadOnly === true ? deps.threadOfRun(action.runKey) : undefined;
      const hits = deps.recall(String(args.query ?? ""), { limit, threadId }) ?? [];
      // `score` is higher-is-better (negated bm25), as the registry's output schema reads.
      return toolSuccess(action.envelope, {
        ...ref,
        output: { hits: hits.map((hit) => ({ messageId: hit.messageId, threadId: hit.threadId, kind: hit.kind, snippet: hit.snippet, createdAt: hit.createdAt, score: -hit.rank })) },
      });
    }
    case "ask_user": {
      const decisionId = await deps.openQuestion({
        operationId: action.operationId,
        runKey: action.runKey,
        question: String(args.question),
        options: Array.isArray(args.options) ? args.options : [],
        ...(typeof args.recommendedOptionId === "string" ? { recommendedOptionId: args.recommendedOptionId } : {}),
        allowFreeText: args.allowFreeText !== false,
      });
      deps.events.append("decision.requested", action.runKey, { decisionId, kind: "ask_user", question: args.question, options: args.options ?? [] });
      return toolSuccess(action.envelope, { ...ref, output: { decisionId, status: "pending", chosenOptionId: null, answerText: null }, links: [{ relation: "tool_effect", target: { type: "decision", id: decisionId }, effect: "created" }] });
    }
    case "publish_report": {
      // The runtime stamps provenance (the run) and the source cursor (what the agent has processed so far);
      // identical content within one run re-confirms the head instead of writing a second report.
      const published = deps.reports.publish({
        scope: String(args.scope),
        periodKey: typeof args.periodKey === "string" ? args.periodKey : "",
        content: args.content as Record<string, unknown>,
        confidence: typeof args.confidence === "number" ? args.confidence : null,
        provenance: { runKey: action.runKey },
      });
      if (!published.ok) return toolFailure(action.envelope, { ...ref, code: published.code, message: published.message, retryable: false });
      const { report } = published;
      deps.events.append("report.published", action.runKey, { scope: report.scope, reportId: report.id, action: published.action });
      return toolSuccess(action.envelope, {
        ...ref,
        output: { reportId: report.id, scope: report.scope, created: published.created },
        links: [{ relation: "tool_effect", target: { type: "report", id: report.id }, effect: published.created ? "created" : "updated" }],
      });
    }
    default:
      return toolFailure(action.envelope, { ...ref, code: "tool_unavailable", message: `${action.toolName} is not available on this deployment yet`, retryable: false });
  }
}
