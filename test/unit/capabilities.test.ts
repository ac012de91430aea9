import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  allowedTools,
  CAPABILITY_PROFILES,
  capabilityOverrideSchema,
  checkToolAccess,
  isToolAllowed,
  mergeProfile,
  profileForKind,
  resolveAgentProfile,
  type CapabilityProfile,
} from "../../src/tools/capabilities";
import { builtinTools, CAPABILITIES, toolRegistry, type ToolDefinition } from "../../src/tools/registry";

const tools = builtinTools as readonly ToolDefinition[];
const capabilityArb = fc.constantFrom(...CAPABILITIES);

describe("capability profiles", () => {
  it("map agent kinds to profiles, anything else (even 'constructor') to default", () => {
    expect(profileForKind("planner")).toBe(CAPABILITY_PROFILES.planner);
    expect(profileForKind("gym_coach")).toBe(CAPABILITY_PROFILES.coach);
    expect(profileForKind("triager")).toBe(CAPABILITY_PROFILES.default);
    expect(profileForKind("constructor")).toBe(CAPABILITY_PROFILES.default);
  });

  it("default reads and keeps its own memory but writes no journal data; no profile may spawn", () => {
    const writes = allowedTools(CAPABILITY_PROFILES.default, tools, "userInitiated").filter((tool) => tool.sideEffects.kind === "journal_write");
    expect(writes).toEqual([]);
    expect(isToolAllowed(CAPABILITY_PROFILES.default, toolRegistry.memory_update_slot, "timer")).toBe(true);
    expect(isToolAllowed(CAPABILITY_PROFILES.reader, toolRegistry.memory_update_slot, "timer")).toBe(false);
    for (const profile of Object.values(CAPABILITY_PROFILES)) expect(profile.capabilities).not.toContain("spawn");
  });

  it("let a planner conclude tasks with rollover, a coach log time but not replan the day", () => {
    expect(isToolAllowed(CAPABILITY_PROFILES.planner, toolRegistry.conclude_task_with_rollover, "userInitiated")).toBe(true);
    expect(isToolAllowed(CAPABILITY_PROFILES.coach, toolRegistry.create_retrospective_time_entry, "userInitiated")).toBe(true);
    expect(checkToolAccess(CAPABILITY_PROFILES.coach, toolRegistry.replan_day_blocks, "userInitiated")).toEqual({
      allowed: false,
      code: "capability_denied",
      missing: ["dayPlanWrite"],
    });
  });
});

describe("checkToolAccess", () => {
  const planner = CAPABILITY_PROFILES.planner;

  it("answers the first failing check with its code", () => {
    expect(checkToolAccess({ ...planner, deniedTools: ["create_task"] }, toolRegistry.create_task, "timer")).toEqual({ allowed: false, code: "tool_denied" });
    expect(checkToolAccess(CAPABILITY_PROFILES.reader, toolRegistry.create_follow_up_task, "timer")).toEqual({
      allowed: false,
      code: "capability_denied",
      missing: ["taskWrite", "checklistWrite"],
    });
    expect(checkToolAccess({ ...planner, maxRiskLevel: "medium" }, toolRegistry.move_checklist_items, "timer")).toEqual({
      allowed: false,
      code: "risk_not_allowed",
      riskLevel: "high",
      maxRiskLevel: "medium",
    });
    expect(checkToolAccess(planner, toolRegistry.move_checklist_items, "webhook")).toEqual({ allowed: false, code: "wake_reason_not_allowed", wakeReason: "webhook" });
    expect(checkToolAccess(planner, toolRegistry.move_checklist_items, "manual")).toEqual({ allowed: true });
  });

  it("allowedTools keeps catalog order and drops high-risk tools on webhook wakes", () => {
    const onWebhook = allowedTools(planner, tools, "webhook").map((tool) => tool.name);
    const onUser = allowedTools(planner, tools, "userInitiated").map((tool) => tool.name);
    expect(onUser.filter((name) => !onWebhook.includes(name))).toEqual(["conclude_task_with_rollover", "move_checklist_items", "move_checklist_items_to_new_task", "replan_day_blocks"]);
    expect(onUser).toEqual(tools.map((tool) => tool.name).filter((name) => onUser.includes(name)));
  });
});

describe("per-agent overrides", () => {
  it("grant, revoke (revocation wins), deny tools and change the risk ceiling", () => {
    const merged = mergeProfile(CAPABILITY_PROFILES.reader, { grant: ["taskWrite", "ratingWrite"], revoke: ["ratingWrite", "sleep"], denyTools: ["update_task_fields"], maxRiskLevel: "medium" });
    expect(merged.capabilities).toEqual(["categoryRead", "taskRead", "taskWrite", "dayPlanRead", "ratingRead", "memoryRead", "askUser"]);
    expect(merged.deniedTools).toEqual(["update_task_fields"]);
    expect(merged.maxRiskLevel).toBe("medium");
    expect(isToolAllowed(merged, toolRegistry.create_task, "timer")).toBe(true);
    expect(checkToolAccess(merged, toolRegistry.update_task_fields, "timer")).toEqual({ allowed: false, code: "tool_denied" });
  });

  it("is canonical and idempotent: (base ∪ grant) ∖ revoke in catalog order", () => {
    const profileArb = fc.constantFrom(...(Object.values(CAPABILITY_PROFILES) as CapabilityProfile[]));
    fc.assert(
      fc.property(profileArb, fc.array(capabilityArb), fc.array(capabilityArb), (base, grant, revoke) => {
        const merged = mergeProfile(base, { grant, revoke });
        const expected = CAPABILITIES.filter((c) => (base.capabilities.includes(c) || grant.includes(c)) && !revoke.includes(c));
        expect(merged.capabilities).toEqual(expected);
        expect(mergeProfile(merged, { grant, revoke })).toEqual(merged);
        expect(mergeProfile(base, { grant: [...grant].reverse(), revoke: [...revoke].reverse() })).toEqual(merged);
      }),
    );
  });

  it("resolveAgentProfile starts from the kind's profile unless the override names one", () => {
    expect(resolveAgentProfile("planner")).toEqual(CAPABILITY_PROFILES.planner);
    expect(resolveAgentProfile("planner", { profile: "reader" }).name).toBe("reader");
    expect(resolveAgentProfile("triager", { grant: ["spawn"] }).capabilities).toContain("spawn");
  });

  it("the override schema names the failing field and refuses unknown capabilities", () => {
    expect(capabilityOverrideSchema.parse({ grant: ["taskWrite"] })).toEqual({ grant: ["taskWrite"], revoke: [], denyTools: [] });
    const bad = capabilityOverrideSchema.safeParse({ grant: ["rootAccess"], denyTools: ["Bad Name"] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((issue) => issue.path.join("."))).toEqual(["grant.0", "denyTools.0"]);
    expect(capabilityOverrideSchema.safeParse({ extra: true }).success).toBe(false);
  });
});
