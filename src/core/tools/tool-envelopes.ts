/**
 * Typed payloads of `action` and `toolResult` messages (seed 000 §4.3.1, §4.5). The
 * action envelope is the persisted plan: written before execution, it carries everything its ids
 * were derived from, so a replay re-reads and verifies it instead of planning again. Tool failures
 * are data (`{ok: false, code, message, retryable}`), never exceptions.
 */
import { z } from "zod";
import { actionStableId, canonicalArgsHash, operationId, scopeSnapshot } from "../ids/action-ids";
import { entityRefKey, entityRefSchema, normalizeRefs, type EntityRef } from "../ids/entity-refs";
import { compareStrings } from "../wakes/tokens";

export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Seed 000 §4.3.1 `actionType`. */
export const ACTION_TYPES = ["tool_call", "propose_plan", "ask_user", "lifecycle_transition"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** What a tool did to a linked entity (`AgentLink` relation `tool_effect`). */
export const TOOL_EFFECTS = ["created", "updated", "deleted", "read"] as const;

/** Error codes the runtime itself produces; handlers and tenant HTTP tools may add snake_case codes. */
export const TOOL_ERROR_CODES = [
  "validation_failed", "unknown_tool", "capability_denied", "tool_denied", "risk_not_allowed",
  "wake_reason_not_allowed", "out_of_scope", "ambiguous_target", "not_found", "version_conflict",
  "approval_rejected", "approval_timed_out", "brake_active", "budget_exceeded", "tool_quota_exceeded",
  "network_denied", "agent_destroyed", "timeout", "upstream_error", "internal_error",
] as const;

export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "must be a lowercase hex SHA-256");
const toolName = z.string().regex(TOOL_NAME_PATTERN, "toolName must be snake_case");
const toolVersion = z.int().min(1);

export const actionEnvelopeSchema = z.strictObject({
  envelopeVersion: z.literal(1),
  actionType: z.enum(ACTION_TYPES),
  toolName,
  toolVersion,
  /** Validated arguments; `argumentsHash = canonicalArgsHash(args)`. */
  args: z.record(z.string(), z.json()),
  argumentsHash: hex64,
  /** `allowedCategoryIds` at planning time, unique and sorted. */
  scopeSnapshot: z.array(z.string().min(1)),
  /** Resolved targets (the entities the action may affect), unique and ordered by key. */
  targetRefs: z.array(entityRefSchema),
  actionStableId: hex64,
  runKey: hex64,
  operationId: hex64,
  riskLevel: z.enum(RISK_LEVELS),
  previewOnly: z.boolean(),
});
export type ActionEnvelope = z.infer<typeof actionEnvelopeSchema>;

export const toolEffectLinkSchema = z.strictObject({
  relation: z.literal("tool_effect"),
  target: entityRefSchema,
  effect: z.enum(TOOL_EFFECTS),
});
export type ToolEffectLink = z.infer<typeof toolEffectLinkSchema>;

const resultBase = { envelopeVersion: z.literal(1), actionRefId: z.string().min(1).max(256), toolName, toolVersion, operationId: hex64 };

export const toolSuccessSchema = z.strictObject({
  ...resultBase,
  ok: z.literal(true),
  /** `partial`: some of a bulk request applied; `output` says which. */
  status: z.enum(["success", "partial"]),
  /** True when `previewOnly` was requested: `output` describes changes that were not applied. */
  preview: z.boolean(),
  output: z.json(),
  links: z.array(toolEffectLinkSchema),
  /** `"type:id"` of every linked entity the tool created, updated or deleted, sorted. */
  changedEntityIds: z.array(z.string()),
  /** Token keys of the notifications the change emitted, sorted. */
  changedTokens: z.array(z.string()),
});
export type ToolSuccess = z.infer<typeof toolSuccessSchema>;

export const toolFailureSchema = z.strictObject({
  ...resultBase,
  ok: z.literal(false),
  status: z.literal("error"),
  code: z.string().regex(/^[a-z][a-z0-9_]*$/, "code must be snake_case"),
  message: z.string().max(2000),
  retryable: z.boolean(),
  details: z.record(z.string(), z.json()).optional(),
});
export type ToolFailure = z.infer<typeof toolFailureSchema>;

export const toolResultEnvelopeSchema = z.discriminatedUnion("ok", [toolSuccessSchema, toolFailureSchema]);
export type ToolResultEnvelope = z.infer<typeof toolResultEnvelopeSchema>;

/** `ask_user` opens a decision and `sleep` moves the lifecycle; every other tool is a `tool_call`. */
export function actionTypeForTool(name: string): ActionType {
  return name === "ask_user" ? "ask_user" : name === "sleep" ? "lifecycle_transition" : "tool_call";
}

export interface PlanActionInput {
  tool: { name: string; version: number; riskLevel: RiskLevel };
  /** Validated arguments (the tool's input schema output). */
  args: Record<string, z.core.util.JSONType>;
  allowedCategoryIds: Iterable<string>;
  targetRefs: Iterable<EntityRef>;
  runKey: string;
}

/**
 * Plans one action: derives every id from the intent and the run. Pure. `previewOnly` is an argument
 * of the high-risk tools, so a preview and its apply hash apart and are two operations.
 */
export function buildActionEnvelope(input: PlanActionInput): ActionEnvelope {
  const scope = scopeSnapshot(input.allowedCategoryIds);
  const targetRefs = normalizeRefs(input.targetRefs);
  const stableId = actionStableId({ toolName: input.tool.name, args: input.args, allowedCategoryIds: scope, targetRefs });
  return {
    envelopeVersion: 1,
    actionType: actionTypeForTool(input.tool.name),
    toolName: input.tool.name,
    toolVersion: input.tool.version,
    args: input.args,
    argumentsHash: canonicalArgsHash(input.args),
    scopeSnapshot: scope,
    targetRefs,
    actionStableId: stableId,
    runKey: input.runKey,
    operationId: operationId(input.runKey, stableId),
    riskLevel: input.tool.riskLevel,
    previewOnly: input.args["previewOnly"] === true,
  };
}

export type ActionCheck = { ok: true } | { ok: false; code: "action_plan_mismatch"; field: "argumentsHash" | "actionStableId" | "operationId" };

/** Recomputes a persisted envelope's ids from its own fields: a stored plan must explain its ids. */
export function verifyActionEnvelope(action: ActionEnvelope): ActionCheck {
  if (canonicalArgsHash(action.args) !== action.argumentsHash) return { ok: false, code: "action_plan_mismatch", field: "argumentsHash" };
  const stableId = actionStableId({ toolName: action.toolName, args: action.args, allowedCategoryIds: action.scopeSnapshot, targetRefs: action.targetRefs });
  if (stableId !== action.actionStableId) return { ok: false, code: "action_plan_mismatch", field: "actionStableId" };
  if (operationId(action.runKey, stableId) !== action.operationId) return { ok: false, code: "action_plan_mismatch", field: "operationId" };
  return { ok: true };
}

export type PlanOutcome =
  | { status: "reused"; action: ActionEnvelope }
  | { status: "planned"; action: ActionEnvelope }
  | { status: "corrupt"; code: "action_plan_mismatch"; field: string };

/**
 * Replay rule (seed 001 §6.2): a persisted plan is reused as is — `plan` is not even called — so a
 * replay keeps its `operationId` even if the agent's scope or the model's output changed since.
 */
export function planOrReuse(persisted: ActionEnvelope | undefined, plan: () => ActionEnvelope): PlanOutcome {
  if (!persisted) return { status: "planned", action: plan() };
  const check = verifyActionEnvelope(persisted);
  return check.ok ? { status: "reused", action: persisted } : { status: "corrupt", code: check.code, field: check.field };
}

const sortedUnique = (values: Iterable<string>) => [...new Set(values)].sort(compareStrings);

/** A success envelope for `action`; `changedEntityIds` is derived from the non-`read` links. */
export function toolSuccess(
  action: Pick<ActionEnvelope, "toolName" | "toolVersion" | "operationId" | "previewOnly">,
  result: { actionRefId: string; output: z.core.util.JSONType; links?: ToolEffectLink[]; changedTokens?: string[]; partial?: boolean },
): ToolSuccess {
  const links = result.links ?? [];
  return {
    envelopeVersion: 1,
    actionRefId: result.actionRefId,
    toolName: action.toolName,
    toolVersion: action.toolVersion,
    operationId: action.operationId,
    ok: true,
    status: result.partial ? "partial" : "success",
    preview: action.previewOnly,
    output: result.output,
    links,
    changedEntityIds: action.previewOnly ? [] : sortedUnique(links.filter((link) => link.effect !== "read").map((link) => entityRefKey(link.target))),
    changedTokens: action.previewOnly ? [] : sortedUnique(result.changedTokens ?? []),
  };
}

/** A failure envelope for `action`. */
export function toolFailure(
  action: Pick<ActionEnvelope, "toolName" | "toolVersion" | "operationId">,
  failure: { actionRefId: string; code: string; message: string; retryable: boolean; details?: Record<string, z.core.util.JSONType> },
): ToolFailure {
  return {
    envelopeVersion: 1,
    actionRefId: failure.actionRefId,
    toolName: action.toolName,
    toolVersion: action.toolVersion,
    operationId: action.operationId,
    ok: false,
    status: "error",
    code: failure.code,
    message: failure.message,
    retryable: failure.retryable,
    ...(failure.details ? { details: failure.details } : {}),
  };
}
