import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WAKE_REASONS, type WakeReason } from "../../src/core/ids/run-keys";
import { isCoalescible, selectCompanions } from "../../src/core/wakes/coalescing";

const wake = (runKey: string, reason: WakeReason) => ({ runKey, reason });

describe("wake coalescing", () => {
  it("merges queued autonomous wakes into an autonomous run, oldest first, up to the limit", () => {
    const pending = [wake("a", "subscription"), wake("b", "userInitiated"), wake("c", "timer"), wake("d", "webhook"), wake("e", "manual")];
    expect(selectCompanions(wake("p", "subscription"), pending, 2).map((w) => w.runKey)).toEqual(["a", "c"]);
  });

  it("never merges conversation turns or manual wakes", () => {
    expect(selectCompanions(wake("p", "userInitiated"), [wake("a", "subscription")], 10)).toEqual([]);
    expect(selectCompanions(wake("p", "manual"), [wake("a", "subscription")], 10)).toEqual([]);
    expect(isCoalescible("userInitiated")).toBe(false);
  });

  it("never returns the primary, a duplicate key, or more than the limit (property)", () => {
    const arbWake = fc.record({ runKey: fc.string({ minLength: 1, maxLength: 4 }), reason: fc.constantFrom(...WAKE_REASONS) });
    fc.assert(
      fc.property(arbWake, fc.array(arbWake, { maxLength: 30 }), fc.nat(10), (primary, pending, limit) => {
        const chosen = selectCompanions(primary, pending, limit);
        expect(chosen.length).toBeLessThanOrEqual(limit);
        expect(chosen.every((w) => w.runKey !== primary.runKey && isCoalescible(w.reason))).toBe(true);
        expect(chosen.every((w) => pending.includes(w))).toBe(true);
      }),
    );
  });
});
