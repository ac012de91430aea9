import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extensionValidators } from "../../src/core/memory/extension-slots";
import { applySlotUpdate, emptySlots, parseSlots, renderSlots, SLOT_KEYS, slotVersion, type AgentSlots } from "../../src/core/memory/slots";

function apply(slots: AgentSlots, key: string, value: unknown, expectedVersion?: number): AgentSlots {
  const result = applySlotUpdate(slots, key, value, expectedVersion);
  if (!result.ok) throw new Error(result.code);
  return result.slots;
}

describe("AgentSlots parsing", () => {
  it("fills every missing slot with its empty value and version 0", () => {
    expect(parseSlots({})).toEqual({ ok: true, slots: emptySlots() });
    expect(parseSlots(null)).toEqual({ ok: true, slots: emptySlots() });
  });

  it("round-trips stored slots and rejects malformed ones with the failing path", () => {
    const slots = apply(apply(emptySlots(), "primaryGoal", "Run a marathon"), "openLoopIds", ["t1", "t2"]);
    expect(parseSlots(JSON.parse(JSON.stringify(slots)))).toEqual({ ok: true, slots });
    const bad = parseSlots({ openLoopIds: "t1", primaryGoalVersion: -1 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues.map((issue) => issue.path).sort()).toEqual(["openLoopIds", "primaryGoalVersion"]);
  });
});

describe("applySlotUpdate", () => {
  it("replaces a slot and bumps only that slot's version", () => {
    const result = applySlotUpdate(emptySlots(), "activeTaskId", "task-1");
    expect(result).toMatchObject({ ok: true, key: "activeTaskId", version: 1, changed: true });
    if (!result.ok) return;
    expect(result.slots.activeTaskId).toBe("task-1");
    for (const key of SLOT_KEYS) expect(slotVersion(result.slots, key)).toBe(key === "activeTaskId" ? 1 : 0);
  });

  it("answers version_conflict for a stale expectedVersion and changes nothing", () => {
    const slots = apply(emptySlots(), "primaryGoal", "A", 0);
    expect(applySlotUpdate(slots, "primaryGoal", "B", 0)).toEqual({ ok: false, code: "version_conflict", key: "primaryGoal", expectedVersion: 0, actualVersion: 1 });
    expect(applySlotUpdate(slots, "primaryGoal", "B", 1)).toMatchObject({ ok: true, version: 2 });
  });

  it("treats writing the current value as an idempotent no-op", () => {
    const slots = apply(emptySlots(), "preferenceByKey", { units: "km", tone: "brief" });
    const again = applySlotUpdate(slots, "preferenceByKey", { tone: "brief", units: "km" });
    expect(again).toEqual({ ok: true, slots, key: "preferenceByKey", version: 1, changed: false });
  });

  it("rejects unknown keys and invalid values as invalid_slot", () => {
    expect(applySlotUpdate(emptySlots(), "mood", "happy")).toMatchObject({ ok: false, code: "invalid_slot", key: "mood" });
    expect(applySlotUpdate(emptySlots(), "primaryGoal", "x".repeat(1_001))).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "primaryGoal", "   ")).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "openLoopIds", ["t1", "t1"])).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "preferenceByKey", { "bad key": "v" })).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "activeTaskId", 42)).toMatchObject({ ok: false, code: "invalid_slot" });
  });

  it("clears nullable slots with null", () => {
    const slots = apply(emptySlots(), "activeTaskId", "task-1");
    expect(applySlotUpdate(slots, "activeTaskId", null)).toMatchObject({ ok: true, version: 2, slots: { activeTaskId: null } });
  });

  it("accepts only namespaced, registered extension keys, validated by their schema", () => {
    const extensionSchemas = extensionValidators({ "gym.weeklyTarget": { schema: { type: "integer", minimum: 1, maximum: 14 }, maxChars: 8 } });
    expect(applySlotUpdate(emptySlots(), "extension", { weeklyTarget: 3 }, undefined, { extensionSchemas })).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "extension", { "gym.other": 3 }, undefined, { extensionSchemas })).toMatchObject({
      ok: false,
      issues: [{ path: "gym.other", message: expect.stringContaining("extension key is not registered: gym.other") }],
    });
    expect(applySlotUpdate(emptySlots(), "extension", { "gym.weeklyTarget": 99 }, undefined, { extensionSchemas })).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(applySlotUpdate(emptySlots(), "extension", { "gym.weeklyTarget": 3 }, undefined, { extensionSchemas })).toMatchObject({
      ok: true,
      version: 1,
      slots: { extension: { "gym.weeklyTarget": 3 } },
    });
  });

  it("holds each registered extension key to its own size cap", () => {
    const extensionSchemas = extensionValidators({ "crm.note": { schema: { type: "string" }, maxChars: 12 } });
    expect(applySlotUpdate(emptySlots(), "extension", { "crm.note": "0123456789" }, undefined, { extensionSchemas })).toMatchObject({ ok: true });
    expect(applySlotUpdate(emptySlots(), "extension", { "crm.note": "0123456789A" }, undefined, { extensionSchemas })).toMatchObject({
      ok: false,
      issues: [{ path: "crm.note", message: expect.stringContaining("at most 12") }],
    });
  });

  it("lets exactly one of two writers holding the same version win", () => {
    fc.assert(
      fc.property(fc.constantFrom("primaryGoal", "activeTaskId"), fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() === s && s !== ""), fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() === s && s !== ""), (key, first, second) => {
        fc.pre(first !== second);
        const base = emptySlots();
        const seen = slotVersion(base, key);
        const a = applySlotUpdate(base, key, first, seen);
        expect(a.ok).toBe(true);
        if (!a.ok) return;
        expect(applySlotUpdate(a.slots, key, second, seen)).toMatchObject({ ok: false, code: "version_conflict", actualVersion: seen + 1 });
      }),
    );
  });

  it("increments a version by exactly one per change and never otherwise", () => {
    const update = fc.record({ key: fc.constantFrom(...SLOT_KEYS), pick: fc.integer({ min: 0, max: 2 }), stale: fc.boolean() });
    const values: Record<(typeof SLOT_KEYS)[number], unknown[]> = {
      primaryGoal: ["A", "B", null],
      activeTaskId: ["t1", "t2", null],
      openLoopIds: [[], ["t1"], ["t1", "t2"]],
      preferenceByKey: [{}, { a: "1" }, { b: "2" }],
      extension: [{}, {}, {}],
    };
    fc.assert(
      fc.property(fc.array(update, { maxLength: 40 }), (updates) => {
        let slots = emptySlots();
        for (const { key, pick, stale } of updates) {
          const version = slotVersion(slots, key);
          const result = applySlotUpdate(slots, key, values[key][pick], stale ? version + 1 : version);
          if (stale) {
            expect(result).toMatchObject({ ok: false, code: "version_conflict" });
            continue;
          }
          expect(result.ok).toBe(true);
          if (!result.ok) continue;
          expect(result.version).toBe(result.changed ? version + 1 : version);
          for (const other of SLOT_KEYS) if (other !== key) expect(slotVersion(result.slots, other)).toBe(slotVersion(slots, other));
          slots = result.slots;
        }
      }),
    );
  });
});

describe("renderSlots", () => {
  it("renders set slots deterministically, preferences in key order, and empty slots as nothing", () => {
    expect(renderSlots(emptySlots())).toBe("");
    const a = apply(apply(emptySlots(), "primaryGoal", "Run"), "preferenceByKey", { z: "1", a: "2" });
    const b = apply(apply(emptySlots(), "preferenceByKey", { a: "2", z: "1" }), "primaryGoal", "Run");
    expect(renderSlots(a)).toBe("primaryGoal: Run\npreferences: a=2; z=1");
    expect(renderSlots(b)).toBe(renderSlots(a));
  });
});
