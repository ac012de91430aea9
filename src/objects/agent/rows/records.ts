import type { InferSelectModel } from "drizzle-orm";
import type { Agent, AgentConfig, AgentState } from "../../../schema/agents/agents";
import type { Message } from "../../../schema/agents/messages";
import type { Run } from "../../../schema/agents/runs";
import type { agentMeta, agentState, messages, runs } from "../../../db/agent-schema";
import { unpackRunTrace } from "./stored-trace";
import { summaryMetadata } from "./summary-metadata";

/** Row → public record mappings: the only place that knows both shapes. */
export function toAgent(row: InferSelectModel<typeof agentMeta>): Agent {
  return {
    id: row.id,
    kind: row.kind,
    displayName: row.displayName,
    lifecycle: row.lifecycle as Agent["lifecycle"],
    mode: row.mode as Agent["mode"],
    allowedCategoryIds: row.allowedCategoryIds,
    // Agents created before a config field existed read its default.
    config: { fallbackModels: [], controlMode: "adaptive", budgets: null, lineage: null, doubleTexting: "enqueue", ...(row.config as Partial<AgentConfig>) } as AgentConfig,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toState(row: InferSelectModel<typeof agentState>): AgentState {
  const { agentId: _agentId, ...state } = row;
  return state;
}

/** A message row as `messageRow` selects it: a summary's span comes with it (`summarySpan`; absent on rows built in memory). */
export type MessageRow = InferSelectModel<typeof messages> & { summarySpan?: string | null };

export function toMessage(agentId: string, row: MessageRow): Message {
  const message: Message = {
    id: row.id,
    agentId,
    threadId: row.threadId,
    kind: row.kind as Message["kind"],
    createdAt: row.createdAt,
    // Rows before issue 12 §6 repeat prevMessageId in their metadata JSON; later rows keep it in its column
    // alone. Either way it is set after the message's own keys, where the stored copy used to sit.
    metadata: { ...summaryMetadata(row.metadata, row.summarySpan), prevMessageId: row.prevMessageId, ...(row.runKey ? { runKey: row.runKey } : {}), ...(row.authority ? { authority: row.authority } : {}) },
  };
  if (row.text !== null) message.text = row.text;
  if (row.content !== null && row.content !== undefined) message.content = row.content;
  return message;
}

export function toRun(row: InferSelectModel<typeof runs>): Run {
  return { ...row, reason: row.reason as Run["reason"], status: row.status as Run["status"], trace: unpackRunTrace(row.trace, row) };
}
