import { z } from "@hono/zod-openapi";
import { LIFECYCLES } from "../../core/runtime/lifecycle";
import { WAKE_REASONS } from "../../core/ids/run-keys";
import { IsoTimestamp, ResourceId } from "../common";
import { CreateSubscriptionBody } from "./subscriptions";
import { CreateTimerBody } from "./timers";
import { capabilityOverrideSchema } from "../../tools/capabilities";
import { CONTROL_MODES } from "../../core/governance/escalation";
import { budgetLimitsSchema } from "../../core/governance/budget";
import { checkTenantPattern } from "../../core/tools/tenant-pattern";
import { DOUBLE_TEXTING_POLICIES } from "../../core/wakes/double-texting";

export const AGENT_MODES = ["autonomous", "interactive", "hybrid"] as const;

/**
 * `provider:model`. Remote providers are checked against the tenant's policy at inference time
 * (the policy can change after the agent is created), the builtin ones here.
 */
export const ModelId = z
  .string()
  .max(200)
  .regex(/^(builtin|openai|anthropic|openai-compatible|workers-ai):[A-Za-z0-9._:/@-]+$/, "must be provider:model, e.g. builtin:echo")
  .refine((id) => !id.startsWith("builtin:") || id === "builtin:echo" || id === "builtin:playbook", {
    message: "the builtin provider has builtin:echo and builtin:playbook",
  });

/** What a user message does while a run of its session is in flight (src/core/wakes/double-texting.ts). */
export const DoubleTextingSchema = z.enum(DOUBLE_TEXTING_POLICIES).openapi({
  description: "A user message arriving while a run of the same session is in flight: enqueue (own run, in order) | reject (409 run_in_progress) | interrupt (in-flight runs stop at their next step boundary as `interrupted`; this message runs after, with their messages in context) | merge (folded into the session's next run)",
});

/** Seed 002 control modes; decide which tool calls escalate to a human. */
export const ControlModeSchema = z.enum(CONTROL_MODES);

/** Lineage of a spawned child (SPEC §3 delegation); null for top-level agents. */
export const AgentLineage = z.object({
  parentId: z.string(),
  rootId: z.string(),
  depth: z.number().int().min(1),
  spawnOperationId: z.string(),
  onComplete: z.enum(["report_result_to_parent", "destroy_child_on_success", "keep_child_active"]),
  expiresAt: IsoTimestamp.nullable(),
  maxSteps: z.number().int().min(1).nullable(),
  tokenBudget: z.number().int().min(0).nullable(),
});
export type AgentLineage = z.infer<typeof AgentLineage>;

/** A tenant's pattern runs on the linear-time RE2 engine (src/core/tools/tenant-pattern.ts); what RE2 cannot express is refused here. */
const RegexSource = z
  .string()
  .max(500)
  .superRefine((source, ctx) => {
    const check = checkTenantPattern(source);
    if (!check.ok) ctx.addIssue({ code: "custom", message: check.message });
  });

/** builtin:playbook rules: the first rule whose `when` matches decides the reply. */
export const PlaybookToolCall = z.object({ name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), args: z.record(z.string(), z.unknown()).default({}) }).strict();

export const PlaybookRule = z
  .object({
    when: z
      .object({
        reason: z.enum(WAKE_REASONS).optional(),
        textPattern: RegexSource.optional(),
        /** A tokenKey of the waking batch, e.g. `semanticKey|-|TASK`. */
        token: z.string().max(700).optional(),
      })
      .strict()
      .default({}),
    reply: z.string().max(4000).optional(),
    /** Tool calls with `{{path}}` templates over {text, reason, observation}. */
    tools: z.array(PlaybookToolCall).max(8).optional(),
  })
  .strict();
export const Playbook = z
  .object({ rules: z.array(PlaybookRule).max(100), fallbackReply: z.string().max(4000).optional() })
  .strict()
  // Named: the create, patch and read shapes of an agent share it (one client type, not three inline copies).
  .openapi("Playbook");
export type Playbook = z.infer<typeof Playbook>;

/** Options of the builtin provider; `chunkDelayMs` paces streamed words (demos, crash tests). */
export const ModelOptions = z.object({ chunkDelayMs: z.number().int().min(0).max(5000).optional() }).strict();

export const AgentConfig = z.object({
  modelId: z.string(),
  /** Per-agent override of the kind's capability profile (grant/revoke/denyTools/maxRiskLevel). */
  capabilities: capabilityOverrideSchema.nullable().default(null),
  instructions: z.string().nullable(),
  playbook: Playbook.nullable(),
  modelOptions: ModelOptions,
  /** Tried in order when the primary model's attempts are exhausted: the tenant's explicit choice, never ours. */
  fallbackModels: z.array(z.string()).default([]),
  controlMode: ControlModeSchema.default("adaptive"),
  /** Per-day limits for this agent (tenant-local day); absent dimensions fall back to the tenant policy. */
  budgets: budgetLimitsSchema.nullable().default(null),
  lineage: AgentLineage.nullable().default(null),
  /** Issue 15 §4; `POST …/messages` `doubleTexting` overrides it per message. */
  doubleTexting: DoubleTextingSchema.default("enqueue"),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

export const Agent = z
  .object({
    id: z.string(),
    kind: z.string(),
    displayName: z.string(),
    lifecycle: z.enum(LIFECYCLES),
    mode: z.enum(AGENT_MODES),
    allowedCategoryIds: z.array(z.string()),
    config: AgentConfig,
    version: z.number().int(),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
  })
  .openapi("Agent");
export type Agent = z.infer<typeof Agent>;

export const CreateAgentBody = z
  .object({
    kind: z.string().trim().min(1).max(64).regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, _ and -"),
    displayName: z.string().trim().min(1).max(120),
    mode: z.enum(AGENT_MODES).default("hybrid"),
    allowedCategoryIds: z.array(ResourceId).max(100).default([]),
    instructions: z.string().max(20_000).optional(),
    model: ModelId.default("builtin:echo"),
    modelOptions: ModelOptions.default({}),
    playbook: Playbook.optional(),
    capabilities: capabilityOverrideSchema.optional(),
    fallbackModels: z.array(ModelId).max(4).default([]),
    controlMode: ControlModeSchema.default("adaptive"),
    budgets: budgetLimitsSchema.optional(),
    doubleTexting: DoubleTextingSchema.default("enqueue"),
    start: z.boolean().default(true),
    /** Created with the agent, validated up front so that bad input leaves nothing half-made. */
    subscriptions: z.array(CreateSubscriptionBody).max(32).default([]),
    timers: z.array(CreateTimerBody).max(20).default([]),
  })
  .strict()
  .openapi("CreateAgent");
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

export const PatchAgentBody = z
  .object({
    displayName: z.string().trim().min(1).max(120).optional(),
    mode: z.enum(AGENT_MODES).optional(),
    allowedCategoryIds: z.array(ResourceId).max(100).optional(),
    instructions: z.string().max(20_000).nullable().optional(),
    model: ModelId.optional(),
    modelOptions: ModelOptions.optional(),
    playbook: Playbook.nullable().optional(),
    capabilities: capabilityOverrideSchema.nullable().optional(),
    fallbackModels: z.array(ModelId).max(4).optional(),
    controlMode: ControlModeSchema.optional(),
    budgets: budgetLimitsSchema.nullable().optional(),
    doubleTexting: DoubleTextingSchema.optional(),
    /** Optimistic concurrency: when given, must equal the current version. */
    version: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).some((key) => key !== "version"), "at least one field to change")
  .openapi("PatchAgent");
export type PatchAgentBody = z.infer<typeof PatchAgentBody>;

export const AgentState = z
  .object({
    revision: z.number().int(),
    lastWakeAt: IsoTimestamp.nullable(),
    nextWakeAt: IsoTimestamp.nullable(),
    sleepUntil: IsoTimestamp.nullable(),
    recentHeadMessageId: z.string().nullable(),
    latestSummaryMessageId: z.string().nullable(),
    consecutiveFailureCount: z.number().int(),
    slots: z.record(z.string(), z.unknown()),
  })
  .openapi("AgentState");
export type AgentState = z.infer<typeof AgentState>;

export const ListAgentsQuery = z.object({
  include: z.enum(["children"]).optional(),
  lifecycle: z.enum(["created", "active", "dormant", "destroyed"]).optional().openapi({ description: "Only agents in this lifecycle" }),
  mode: z.enum(["autonomous", "interactive", "hybrid"]).optional().openapi({ description: "Only agents in this mode" }),
  kind: z.string().trim().min(1).max(100).optional().openapi({ description: "Only agents of this kind" }),
  q: z.string().trim().min(1).max(100).optional().openapi({ description: "Display name or id contains this text (case-insensitive)" }),
});
/** The filters of `GET /v1/agents` (all optional; together they narrow the list). */
export type AgentFilters = Pick<z.infer<typeof ListAgentsQuery>, "lifecycle" | "mode" | "kind" | "q">;
