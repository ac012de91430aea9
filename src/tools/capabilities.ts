/**
 * Capability profiles (seed 000 §4.1 `AgentCapabilityProfile`): a named profile per agent
 * kind, per-agent overrides merged on top, and the gate that says whether a tool may run for a wake.
 * Pure: deny by default, revocations beat grants, and the result is in a canonical order.
 */
import { z } from "zod";
import type { WakeReason } from "../core/ids/run-keys";
import { RISK_LEVELS, TOOL_NAME_PATTERN, type RiskLevel } from "../core/tools/tool-envelopes";
import { compareStrings } from "../core/wakes/tokens";
import { CAPABILITIES, type Capability, type ToolDefinition } from "./registry/types";

export interface CapabilityProfile {
  name: string;
  capabilities: readonly Capability[];
  /** Tools refused even when their capabilities are held. */
  deniedTools: readonly string[];
  /** Tools above this risk level are refused. */
  maxRiskLevel: RiskLevel;
}

const READS: Capability[] = ["categoryRead", "taskRead", "dayPlanRead", "ratingRead"];
const OWN_STATE: Capability[] = ["memoryRead", "memoryWrite", "reportWrite", "askUser", "sleep"];

const profile = (name: string, capabilities: Capability[], maxRiskLevel: RiskLevel): CapabilityProfile =>
  Object.freeze({ name, capabilities: Object.freeze(inCatalogOrder(capabilities)), deniedTools: Object.freeze([]), maxRiskLevel });

/**
 * `default` reads the journal and manages only the agent's own memory, reports and sleep; `reader`
 * cannot even write its memory; `planner` and `coach` write the journal. No profile holds `spawn`.
 */
export const CAPABILITY_PROFILES = Object.freeze({
  default: profile("default", [...READS, ...OWN_STATE], "low"),
  reader: profile("reader", [...READS, "memoryRead", "askUser", "sleep"], "low"),
  planner: profile("planner", [...READS, ...OWN_STATE, "taskWrite", "checklistWrite", "timeWrite", "dayPlanWrite"], "high"),
  coach: profile("coach", [...READS, ...OWN_STATE, "taskWrite", "checklistWrite", "timeWrite", "ratingWrite"], "medium"),
});
export type ProfileName = keyof typeof CAPABILITY_PROFILES;
export const PROFILE_NAMES = Object.keys(CAPABILITY_PROFILES) as [ProfileName, ...ProfileName[]];

/** Agent kinds with a profile of their own (seed 000 names its example kinds); any other kind gets `default`. */
export const PROFILE_BY_KIND: Readonly<Record<string, ProfileName>> = Object.freeze({
  reader: "reader",
  planner: "planner",
  strategy: "planner",
  coach: "coach",
  gym_coach: "coach",
});

export function profileForKind(kind: string): CapabilityProfile {
  const name = Object.hasOwn(PROFILE_BY_KIND, kind) ? PROFILE_BY_KIND[kind] : undefined;
  return CAPABILITY_PROFILES[name ?? "default"];
}

/** Per-agent overrides as `POST /v1/agents` accepts them in `capabilities`. */
export const capabilityOverrideSchema = z.strictObject({
  profile: z.enum(PROFILE_NAMES).optional().describe("start from this profile instead of the kind's"),
  grant: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length).default([]),
  revoke: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length).default([]),
  denyTools: z.array(z.string().regex(TOOL_NAME_PATTERN, "tool names are snake_case")).max(100).default([]),
  maxRiskLevel: z.enum(RISK_LEVELS).optional(),
});
export type CapabilityOverride = z.input<typeof capabilityOverrideSchema>;

function inCatalogOrder(capabilities: Iterable<Capability>): Capability[] {
  const held = new Set(capabilities);
  return CAPABILITIES.filter((capability) => held.has(capability));
}

/** `base` with `override` applied: (capabilities ∪ grant) ∖ revoke, denied tools unioned, risk ceiling replaced. */
export function mergeProfile(base: CapabilityProfile, override: CapabilityOverride = {}): CapabilityProfile {
  const revoked = new Set(override.revoke ?? []);
  return {
    name: base.name,
    capabilities: inCatalogOrder([...base.capabilities, ...(override.grant ?? [])].filter((capability) => !revoked.has(capability))),
    deniedTools: [...new Set([...base.deniedTools, ...(override.denyTools ?? [])])].sort(compareStrings),
    maxRiskLevel: override.maxRiskLevel ?? base.maxRiskLevel,
  };
}

/** The effective profile of an agent: its kind's (or the override's named) profile, then the override. */
export function resolveAgentProfile(kind: string, override?: CapabilityOverride): CapabilityProfile {
  const base = override?.profile ? CAPABILITY_PROFILES[override.profile] : profileForKind(kind);
  return mergeProfile(base, override);
}

export type ToolAccess =
  | { allowed: true }
  | { allowed: false; code: "tool_denied" }
  | { allowed: false; code: "capability_denied"; missing: Capability[] }
  | { allowed: false; code: "risk_not_allowed"; riskLevel: RiskLevel; maxRiskLevel: RiskLevel }
  | { allowed: false; code: "wake_reason_not_allowed"; wakeReason: WakeReason };

type GatedTool = Pick<ToolDefinition, "name" | "capabilitiesRequired" | "riskLevel" | "allowedWakeReasons">;

/** Why `tool` may not run for `profile` on a `wakeReason` wake (first failing check), or that it may. */
export function checkToolAccess(profile: CapabilityProfile, tool: GatedTool, wakeReason: WakeReason): ToolAccess {
  if (profile.deniedTools.includes(tool.name)) return { allowed: false, code: "tool_denied" };
  const missing = tool.capabilitiesRequired.filter((capability) => !profile.capabilities.includes(capability));
  if (missing.length > 0) return { allowed: false, code: "capability_denied", missing };
  if (RISK_LEVELS.indexOf(tool.riskLevel) > RISK_LEVELS.indexOf(profile.maxRiskLevel)) {
    return { allowed: false, code: "risk_not_allowed", riskLevel: tool.riskLevel, maxRiskLevel: profile.maxRiskLevel };
  }
  if (!tool.allowedWakeReasons.includes(wakeReason)) return { allowed: false, code: "wake_reason_not_allowed", wakeReason };
  return { allowed: true };
}

export function isToolAllowed(profile: CapabilityProfile, tool: GatedTool, wakeReason: WakeReason): boolean {
  return checkToolAccess(profile, tool, wakeReason).allowed;
}

/** The subset of `tools` offered to the model on a `wakeReason` run, order kept. */
export function allowedTools<T extends GatedTool>(profile: CapabilityProfile, tools: readonly T[], wakeReason: WakeReason): T[] {
  return tools.filter((tool) => isToolAllowed(profile, tool, wakeReason));
}
