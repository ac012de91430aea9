/**
 * What a tool declaration is (seed 000 §4.1.1 `AgentToolContractSpec`): one record per
 * tool, the single source the executor, the contract spec, the capability gate and `GET /v1/tools`
 * read from. The enums here are mirrored by `tools/contract-spec.schema.json` (a test keeps them equal).
 */
import type { z } from "zod";
import { WAKE_REASONS, type WakeReason } from "../../core/ids/run-keys";
import type { RiskLevel } from "../../core/tools/tool-envelopes";

/** Seed 000 `AgentCapability`, plus the agent-side capabilities of Vigil's extra tools. */
export const CAPABILITIES = [
  "categoryRead",
  "taskRead",
  "taskWrite",
  "checklistWrite",
  "timeWrite",
  "dayPlanRead",
  "dayPlanWrite",
  "ratingRead",
  "ratingWrite",
  "memoryRead",
  "memoryWrite",
  "reportWrite",
  "askUser",
  "sleep",
  "spawn",
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * Category enforcement (seed 000 §4.1.2): `read_filtered` — results filtered to `allowedCategoryIds`;
 * `target_category` — each target's category is checked before acting; `both_ends` — a move or
 * re-categorisation needs source and destination in scope; `none` — touches no categorised data.
 */
export const SCOPE_RULES = ["none", "read_filtered", "target_category", "both_ends"] as const;
export type ScopeRule = (typeof SCOPE_RULES)[number];

/** Where a tool's effect lands: nowhere, the TenantDO journal, the AgentDO, or an outside host. */
export const SIDE_EFFECT_KINDS = ["none", "journal_write", "agent_state", "external_http", "external_mcp"] as const;
export type SideEffectKind = (typeof SIDE_EFFECT_KINDS)[number];

/**
 * `read_only` — no effect, retry freely; `operation_id` — the write is deduplicated by `operationId`
 * (saga phase 1 in the TenantDO, or the AgentDO's own transaction); `natural_key` — the write is an
 * upsert on a key derived from its arguments, so repeating it converges on the same state.
 */
export const IDEMPOTENCY_STRATEGIES = ["read_only", "operation_id", "natural_key"] as const;
export type IdempotencyStrategy = (typeof IDEMPOTENCY_STRATEGIES)[number];

/** Seed 000 `sideEffects`: the kind, the entity types written, the semantic keys emitted. */
export interface SideEffects {
  kind: SideEffectKind;
  entityTypes: readonly string[];
  semanticKeys: readonly string[];
}

export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType, N extends string = string> {
  name: N;
  /** Bumped on any incompatible change of the input or output schema. */
  version: number;
  description: string;
  inputSchema: I;
  outputSchema: O;
  capabilitiesRequired: readonly Capability[];
  allowedWakeReasons: readonly WakeReason[];
  idempotencyStrategy: IdempotencyStrategy;
  scopeRules: readonly ScopeRule[];
  sideEffects: SideEffects;
  riskLevel: RiskLevel;
  /** Accepts `previewOnly` and returns the planned changes without applying them (required for high risk). */
  supportsPreview: boolean;
  /** NEED_TO_KNOW policy naming the fields of this tool's output that may cross a boundary. */
  dataMinimizationPolicyRef: string;
}

/** Every wake reason. */
export const ANY_WAKE: readonly WakeReason[] = [...WAKE_REASONS];

/**
 * Every wake reason but `webhook`: a run woken by external evidence may read and make ordinary
 * writes (still gated by approval), but never starts a high-risk bulk change.
 */
export const NO_EXTERNAL_WAKE: readonly WakeReason[] = WAKE_REASONS.filter((reason) => reason !== "webhook");

/** No side effects: a read. */
export const READ_ONLY: SideEffects = { kind: "none", entityTypes: [], semanticKeys: [] };

/** Freezes `value` and everything under it, except zod schemas (which cache internally). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) if (!(member && typeof member === "object" && "_zod" in member)) deepFreeze(member);
  }
  return value;
}

/** Declares a tool: keeps its precise schema types and freezes its metadata (zod schemas untouched). */
export function defineTool<I extends z.ZodType, O extends z.ZodType, N extends string>(definition: ToolDefinition<I, O, N>): Readonly<ToolDefinition<I, O, N>> {
  return deepFreeze(definition);
}

/** What a declaration states besides its identity and schemas: the part families share. */
export type ToolMetadata = Omit<ToolDefinition, "name" | "description" | "inputSchema" | "outputSchema">;

/** What most tools are: version 1, any wake, low risk, no preview. */
const TOOL_DEFAULTS = { version: 1, allowedWakeReasons: ANY_WAKE, riskLevel: "low", supportsPreview: false } as const satisfies Partial<ToolMetadata>;

/** High-risk bulk changes: previewable, and never started by a webhook wake. */
export const HIGH_RISK = { allowedWakeReasons: NO_EXTERNAL_WAKE, riskLevel: "high", supportsPreview: true } as const satisfies Partial<ToolMetadata>;

/** A declaration in a family: identity and schemas, plus the metadata the family (or TOOL_DEFAULTS) does not give. */
export type FamilyTool<I extends z.ZodType, O extends z.ZodType, N extends string, D> = Pick<ToolDefinition<I, O, N>, "name" | "description" | "inputSchema" | "outputSchema"> &
  Partial<ToolMetadata> &
  Omit<ToolMetadata, keyof D | keyof typeof TOOL_DEFAULTS>;

/**
 * A family of tools (one registry file) sharing metadata: each declaration states only what differs
 * from `defaults` and TOOL_DEFAULTS. The result has the full declaration's keys in their canonical
 * order, so the descriptors, contract spec and `GET /v1/tools` read exactly as when spelled out.
 */
export function defineFamily<D extends Partial<ToolMetadata>>(defaults: D) {
  return <I extends z.ZodType, O extends z.ZodType, N extends string>(tool: FamilyTool<I, O, N, D>): Readonly<ToolDefinition<I, O, N>> => {
    const merged = { ...TOOL_DEFAULTS, ...defaults, ...tool } as ToolDefinition<I, O, N>;
    return defineTool({
      name: merged.name,
      version: merged.version,
      description: merged.description,
      inputSchema: merged.inputSchema,
      outputSchema: merged.outputSchema,
      capabilitiesRequired: merged.capabilitiesRequired,
      allowedWakeReasons: merged.allowedWakeReasons,
      idempotencyStrategy: merged.idempotencyStrategy,
      scopeRules: merged.scopeRules,
      sideEffects: merged.sideEffects,
      riskLevel: merged.riskLevel,
      supportsPreview: merged.supportsPreview,
      dataMinimizationPolicyRef: merged.dataMinimizationPolicyRef,
    });
  };
}
