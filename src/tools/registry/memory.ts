/** Memory tools: recall over the agent's own history, and its core memory slots. */
import { z } from "zod";
import { SLOT_KEYS } from "../../core/memory/slots";
import { defineFamily, READ_ONLY } from "./types";
import { limit, text } from "./shared";

/** The metadata this file's tools share; each tool states only what differs. */
const memoryTool = defineFamily({ scopeRules: ["none"], dataMinimizationPolicyRef: "dm.agent.memory.v1" });

export const memorySearch = memoryTool({
  name: "memory_search",
  description: "Full-text search over this agent's messages and summaries (its own memory only).",
  inputSchema: z.strictObject({
    query: text("query", 500),
    limit: limit(20, 5),
    currentThreadOnly: z.boolean().default(false),
  }),
  outputSchema: z.object({
    hits: z.array(
      z.object({
        messageId: z.string(),
        threadId: z.string(),
        kind: z.string(),
        snippet: z.string(),
        createdAt: z.string(),
        score: z.number(),
      }),
    ),
  }),
  capabilitiesRequired: ["memoryRead"],
  idempotencyStrategy: "read_only",
  sideEffects: READ_ONLY,
});

export const memoryUpdateSlot = memoryTool({
  name: "memory_update_slot",
  description:
    "Replace one core memory slot: primaryGoal (string|null), activeTaskId (string|null), openLoopIds (string[]), preferenceByKey ({key: value}), extension ({\"namespace.name\": json}).",
  inputSchema: z.strictObject({
    slot: z.enum(SLOT_KEYS),
    value: z.json().describe("the slot's new value, shaped as the slot requires"),
    expectedVersion: z.int().min(0).optional().describe("fail with version_conflict unless the slot is still at this version"),
  }),
  outputSchema: z.object({ slot: z.enum(SLOT_KEYS), version: z.int().min(0), changed: z.boolean() }),
  capabilitiesRequired: ["memoryWrite"],
  idempotencyStrategy: "operation_id",
  sideEffects: { kind: "agent_state", entityTypes: ["memory_slot"], semanticKeys: ["agentStateChangedNotification"] },
});

export const memoryTools = [memorySearch, memoryUpdateSlot] as const;
