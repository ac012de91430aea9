/** Delegation (seed 000 Phase -1B `SpawnRequest`, holon `SpawnAgent`): bounded child agents. */
import { z } from "zod";
import { config } from "../../config";
import { ON_COMPLETE_STRATEGIES } from "../../core/governance/spawn-admission";
import { TOOL_NAME_PATTERN } from "../../core/tools/tool-envelopes";
import { entityId, text } from "./shared";
import { defineFamily, NO_EXTERNAL_WAKE } from "./types";

const distinct = <T>(values: readonly T[]) => new Set(values).size === values.length;

const delegationTool = defineFamily({});

export const spawnAgent = delegationTool({
  name: "spawn_agent",
  description:
    "Delegate a goal to a new child agent with a subset of your categories and tools and a token budget drawn from yours. The child starts at once; when its run ends you are woken (reason child) with its result. Admission may refuse (spawn_denied).",
  inputSchema: z.strictObject({
    goal: text("goal", 4_000).describe("what the child should do; the only text it receives"),
    inputRefs: z
      .array(z.strictObject({ type: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, "type is snake_case"), id: entityId("inputRefs[].id") }))
      .max(20)
      .default([])
      .describe("references (not contents) the child may look up with its own tools"),
    requestedAgentKind: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, _ and -").describe("the child's kind (its risk ceiling comes from that kind's profile)"),
    allowedCategoryIds: z.array(entityId("allowedCategoryIds[]")).max(100).default([]).refine(distinct, "allowedCategoryIds must not repeat an id").describe("a subset of yours"),
    allowedTools: z
      .array(z.string().regex(TOOL_NAME_PATTERN, "tool names are snake_case"))
      .max(64)
      .default([])
      .refine(distinct, "allowedTools must not repeat a tool")
      .describe("a subset of the tools you may call; the child gets exactly these"),
    ttl: z.int().min(60).max(604_800).default(86_400).describe("seconds the child may live (60 s to 7 days); it is destroyed after"),
    maxSteps: z.int().min(1).max(config.run.maxStepsPerRun).default(4).describe("steps per run of the child"),
    tokenBudget: z.int().min(1).max(100_000_000).describe("tokens the child may use, drawn from your daily budget"),
    onComplete: z.enum(ON_COMPLETE_STRATEGIES).default("report_result_to_parent"),
  }),
  outputSchema: z.object({
    childId: z.string(),
    childRunKey: z.string(),
    depth: z.int(),
    expiresAt: z.string(),
    status: z.enum(["spawned"]),
  }),
  capabilitiesRequired: ["spawn"],
  allowedWakeReasons: NO_EXTERNAL_WAKE,
  idempotencyStrategy: "operation_id",
  scopeRules: ["target_category"],
  sideEffects: { kind: "agent_state", entityTypes: ["agent"], semanticKeys: ["agentChangedNotification"] },
  dataMinimizationPolicyRef: "dm.agent.spawn_input.v1",
});

export const delegationTools = [spawnAgent] as const;
