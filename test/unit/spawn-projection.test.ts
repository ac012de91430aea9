import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DELEGATION_BOUNDARIES, guardBoundaryPayload, MAX_CHILD_REPLY_CHARS, projectChildResult, projectForBoundary, type DelegationBoundary } from "../../src/core/governance/spawn-projection";

describe("NEED_TO_KNOW at the delegation boundaries", () => {
  it("keeps only the agent_spawn_input allowlist and names what it dropped", () => {
    const projected = projectForBoundary("agent_spawn_input", {
      goal: "research",
      inputRefs: [{ type: "task", id: "t1" }],
      allowedCategoryIds: ["gym"],
      allowedTools: ["memory_search"],
      tokenBudget: 100,
      memory: { secret: "parent transcript" },
    });
    expect(projected).toEqual({
      ok: true,
      boundary: "agent_spawn_input",
      payload: { goal: "research", inputRefs: [{ type: "task", id: "t1" }], allowedCategoryIds: ["gym"], allowedTools: ["memory_search"] },
      dropped: ["memory", "tokenBudget"],
    });
  });

  it("the final guard blocks a field off the list and an oversized payload", () => {
    expect(guardBoundaryPayload("agent_spawn_input", { goal: "x", transcript: [] })).toMatchObject({ ok: false, code: "overshared_payload_blocked" });
    const huge = projectForBoundary("agent_spawn_input", { goal: "x".repeat(DELEGATION_BOUNDARIES.agent_spawn_input.maxBytes) });
    expect(huge).toMatchObject({ ok: false, code: "overshared_payload_blocked" });
  });

  it("a child's result carries its status and a reply cut to size, nothing else", () => {
    const projected = projectChildResult({ childId: "c", childRunKey: "k", status: "completed", errorCode: null, reply: "r".repeat(MAX_CHILD_REPLY_CHARS + 10) });
    expect(projected.ok).toBe(true);
    if (projected.ok) {
      expect(Object.keys(projected.payload).sort()).toEqual(["childId", "childRunKey", "errorCode", "reply", "status"]);
      expect((projected.payload.reply as string).length).toBe(MAX_CHILD_REPLY_CHARS + 1);
    }
  });

  it("a projection is always a subset of its boundary's allowlist (seed 001 projection ⊆ allowlist)", () => {
    const boundaries = Object.keys(DELEGATION_BOUNDARIES) as DelegationBoundary[];
    fc.assert(
      fc.property(fc.constantFrom(...boundaries), fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })), (boundary, source) => {
        const projected = projectForBoundary(boundary, source);
        const allowed: readonly string[] = DELEGATION_BOUNDARIES[boundary].fields;
        if (projected.ok) for (const field of Object.keys(projected.payload)) expect(allowed).toContain(field);
        else expect(projected.code).toBe("overshared_payload_blocked");
      }),
    );
  });
});
