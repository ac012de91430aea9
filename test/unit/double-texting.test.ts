import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { admitTurn, DOUBLE_TEXTING_POLICIES, selectMergedTurns } from "../../src/core/wakes/double-texting";

const turn = (runKey: string, threadId = "t1", merge = true, reason = "userInitiated") => ({ runKey, threadId, merge, reason });

describe("double texting: admitting a turn", () => {
  it("runs the message whatever the policy when nothing of its session is in flight", () => {
    for (const policy of DOUBLE_TEXTING_POLICIES) expect(admitTurn(policy, undefined, [])).toEqual({ kind: "run" });
  });

  it("applies the agent's policy to a session with a run in flight", () => {
    expect(admitTurn("enqueue", undefined, ["r1"])).toEqual({ kind: "queue", policy: "enqueue", inFlight: ["r1"] });
    expect(admitTurn("reject", undefined, ["r1"])).toEqual({ kind: "reject", inFlight: ["r1"] });
    expect(admitTurn("interrupt", undefined, ["r1", "r2"])).toEqual({ kind: "interrupt", inFlight: ["r1", "r2"] });
    expect(admitTurn("merge", undefined, ["r1"])).toEqual({ kind: "queue", policy: "merge", inFlight: ["r1"] });
  });

  it("lets the message's own policy override the agent's", () => {
    expect(admitTurn("reject", "enqueue", ["r1"]).kind).toBe("queue");
    expect(admitTurn("enqueue", "reject", ["r1"]).kind).toBe("reject");
    expect(admitTurn("merge", "interrupt", ["r1"]).kind).toBe("interrupt");
  });
});

describe("double texting: merged turns", () => {
  it("folds the merge turns of the same thread that follow the primary, in order", () => {
    const pending = [turn("a"), turn("x", "t2"), turn("b"), turn("s", "t1", true, "subscription"), turn("c")];
    expect(selectMergedTurns(turn("p", "t1", false), pending, 10).map((t) => t.runKey)).toEqual(["a", "b", "c"]);
  });

  it("stops at a turn of the thread admitted without merge, so none is answered ahead of an earlier one", () => {
    const pending = [turn("a"), turn("b", "t1", false), turn("c")];
    expect(selectMergedTurns(turn("p"), pending, 10).map((t) => t.runKey)).toEqual(["a"]);
  });

  it("merges only into user turns, and at most `limit`", () => {
    expect(selectMergedTurns(turn("p", "t1", false, "timer"), [turn("a")], 10)).toEqual([]);
    expect(selectMergedTurns(turn("p"), [turn("a"), turn("b"), turn("c")], 2).map((t) => t.runKey)).toEqual(["a", "b"]);
  });

  it("never returns the primary, another thread, or more than the limit (property)", () => {
    const arbitraryTurn = fc.record({ runKey: fc.constantFrom("p", "a", "b", "c", "d"), threadId: fc.constantFrom("t1", "t2"), merge: fc.boolean(), reason: fc.constantFrom("userInitiated", "timer") });
    fc.assert(
      fc.property(fc.array(arbitraryTurn, { maxLength: 12 }), fc.integer({ min: 0, max: 5 }), (pending, limit) => {
        const merged = selectMergedTurns(turn("p"), pending, limit);
        expect(merged.length).toBeLessThanOrEqual(limit);
        for (const wake of merged) {
          expect(wake.runKey).not.toBe("p");
          expect(wake).toMatchObject({ threadId: "t1", merge: true, reason: "userInitiated" });
        }
      }),
    );
  });
});
