import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actionStableId, canonicalArgsHash, operationId, scopeSnapshot, scopeSnapshotKey, targetRefsKey, type ActionIntent } from "../../src/core/ids/action-ids";
import { entityRefKey, parseEntityRefKey, type EntityRef } from "../../src/core/ids/entity-refs";
import { canonicalHash, canonicalJson, H } from "../../src/core/ids/hash";
import { buildActionEnvelope, planOrReuse, type PlanActionInput } from "../../src/core/tools/tool-envelopes";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The same value with every object's keys in reverse insertion order, at every depth. */
function reverseKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reverseKeys(member)]));
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

const argsArb = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })) as fc.Arbitrary<Record<string, Json>>;
const idArb = fc.string({ minLength: 1, maxLength: 12 });
const refArb: fc.Arbitrary<EntityRef> = fc.record({ type: fc.constantFrom("task", "checklist", "checklist_item", "day_plan"), id: idArb });
const hexArb = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });
const intentArb: fc.Arbitrary<ActionIntent & { args: Record<string, Json>; allowedCategoryIds: string[]; targetRefs: EntityRef[] }> = fc.record({
  toolName: fc.constantFrom("create_task", "move_checklist_items", "sleep"),
  args: argsArb,
  allowedCategoryIds: fc.array(idArb, { maxLength: 5 }),
  targetRefs: fc.array(refArb, { maxLength: 5 }),
});

describe("canonical pieces", () => {
  it("canonicalArgsHash is canonicalHash of the arguments", () => {
    const args = { b: [1, { d: true, c: null }], a: "x" };
    expect(canonicalArgsHash(args)).toBe(canonicalHash(args));
    expect(canonicalArgsHash(args)).toBe(canonicalHash({ a: "x", b: [1, { c: null, d: true }] }));
  });

  it("scopeSnapshot is the unique category ids in code-unit order, its key their canonical JSON", () => {
    expect(scopeSnapshot(["b", "a", "b", "B"])).toEqual(["B", "a", "b"]);
    expect(scopeSnapshotKey(["b", "a", "b"])).toBe('["a","b"]');
    expect(scopeSnapshotKey([])).toBe("[]");
  });

  it("targetRefsKey is the unique type:id keys in code-unit order as canonical JSON", () => {
    const refs = [{ type: "task", id: "t2" }, { type: "checklist", id: "c1" }, { type: "task", id: "t2" }];
    expect(targetRefsKey(refs)).toBe('["checklist:c1","task:t2"]');
  });

  it("never lets an id containing separators collide with two refs", () => {
    expect(targetRefsKey([{ type: "task", id: 'a","task:b' }])).not.toBe(targetRefsKey([{ type: "task", id: "a" }, { type: "task", id: "b" }]));
    expect(targetRefsKey([{ type: "task", id: "a,task:b" }])).not.toBe(targetRefsKey([{ type: "task", id: "a" }, { type: "task", id: "b" }]));
    expect(scopeSnapshotKey(["a,b"])).not.toBe(scopeSnapshotKey(["a", "b"]));
  });

  it("entity ref keys round-trip, ids may contain ':'", () => {
    fc.assert(
      fc.property(refArb, (ref) => {
        expect(parseEntityRefKey(entityRefKey(ref))).toEqual(ref);
      }),
    );
    expect(parseEntityRefKey("task:a:b")).toEqual({ type: "task", id: "a:b" });
    expect(parseEntityRefKey("Task:a")).toBeNull();
    expect(parseEntityRefKey("task")).toBeNull();
  });
});

describe("actionStableId", () => {
  it("is H(toolName, canonicalArgsHash, scopeSnapshotKey, targetRefsKey)", () => {
    const intent = { toolName: "move_checklist_items", args: { itemIds: ["i1"], toChecklistId: "b" }, allowedCategoryIds: ["cat-b", "cat-a"], targetRefs: [{ type: "checklist", id: "b" }] };
    expect(actionStableId(intent)).toBe(H("move_checklist_items", canonicalHash(intent.args), '["cat-a","cat-b"]', '["checklist:b"]'));
  });

  it("is pure: deterministic and leaves its (frozen) input untouched", () => {
    fc.assert(
      fc.property(intentArb, (intent) => {
        const copy = structuredClone(intent);
        const viaJson = JSON.parse(JSON.stringify(intent)) as typeof intent;
        const frozen = deepFreeze(intent);
        expect(actionStableId(frozen)).toBe(actionStableId(frozen));
        expect(actionStableId(frozen)).toBe(actionStableId(viaJson));
        expect(frozen).toEqual(copy);
      }),
    );
  });

  it("ignores key order, scope order and duplicates, target order and duplicates", () => {
    fc.assert(
      fc.property(intentArb, (intent) => {
        const reordered = {
          toolName: intent.toolName,
          args: reverseKeys(intent.args) as Record<string, Json>,
          allowedCategoryIds: [...intent.allowedCategoryIds].reverse().concat(intent.allowedCategoryIds),
          targetRefs: [...intent.targetRefs].reverse().concat(intent.targetRefs),
        };
        expect(actionStableId(reordered)).toBe(actionStableId(intent));
      }),
    );
  });

  it("differs when the arguments differ", () => {
    fc.assert(
      fc.property(intentArb, argsArb, (intent, otherArgs) => {
        fc.pre(canonicalJson(otherArgs) !== canonicalJson(intent.args));
        expect(actionStableId({ ...intent, args: otherArgs })).not.toBe(actionStableId(intent));
      }),
    );
  });

  it("differs when the tool, the scope or the targets differ", () => {
    const intent = { toolName: "create_task", args: { title: "x" }, allowedCategoryIds: ["a"], targetRefs: [{ type: "task", id: "t1" }] };
    const id = actionStableId(intent);
    expect(actionStableId({ ...intent, toolName: "update_task_fields" })).not.toBe(id);
    expect(actionStableId({ ...intent, allowedCategoryIds: ["a", "b"] })).not.toBe(id);
    expect(actionStableId({ ...intent, allowedCategoryIds: [] })).not.toBe(id);
    expect(actionStableId({ ...intent, targetRefs: [{ type: "task", id: "t2" }] })).not.toBe(id);
    expect(actionStableId({ ...intent, targetRefs: [{ type: "checklist", id: "t1" }] })).not.toBe(id);
  });
});

describe("operationId", () => {
  it("is H(runKey, actionStableId)", () => {
    expect(operationId("r".repeat(64), "s".repeat(64))).toBe(H("r".repeat(64), "s".repeat(64)));
  });

  it("depends on the runKey: the same action in two runs is two operations", () => {
    fc.assert(
      fc.property(hexArb, hexArb, intentArb, (runA, runB, intent) => {
        fc.pre(runA !== runB);
        const stable = actionStableId(intent);
        expect(operationId(runA, stable)).not.toBe(operationId(runB, stable));
        expect(operationId(runA, stable)).toBe(operationId(runA, actionStableId(intent)));
      }),
    );
  });
});

describe("replay reuses the persisted plan", () => {
  const plan = (input: Partial<PlanActionInput> = {}): PlanActionInput => ({
    tool: { name: "conclude_task_with_rollover", version: 1, riskLevel: "high" },
    args: { taskId: "t1", concludeAs: "done", rollover: { target: "none" }, previewOnly: false },
    allowedCategoryIds: ["cat-a", "cat-b"],
    targetRefs: [{ type: "task", id: "t1" }],
    runKey: "a".repeat(64),
    ...input,
  });

  it("a plan read back from storage yields the same operationId, and planning again is never called", () => {
    fc.assert(
      fc.property(hexArb, intentArb, (runKey, intent) => {
        const original = buildActionEnvelope(plan({ runKey, args: intent.args, allowedCategoryIds: intent.allowedCategoryIds, targetRefs: intent.targetRefs }));
        const stored = JSON.parse(JSON.stringify(original));
        let replanned = 0;
        const outcome = planOrReuse(stored, () => {
          replanned += 1;
          return original;
        });
        expect(outcome).toEqual({ status: "reused", action: stored });
        if (outcome.status === "reused") expect(outcome.action.operationId).toBe(original.operationId);
        expect(replanned).toBe(0);
      }),
    );
  });

  it("keeps the persisted operationId even when the agent's scope changed since planning", () => {
    const persisted = buildActionEnvelope(plan());
    const outcome = planOrReuse(persisted, () => buildActionEnvelope(plan({ allowedCategoryIds: ["cat-a"] })));
    expect(outcome.status).toBe("reused");
    if (outcome.status === "reused") expect(outcome.action.operationId).toBe(persisted.operationId);
    expect(buildActionEnvelope(plan({ allowedCategoryIds: ["cat-a"] })).operationId).not.toBe(persisted.operationId);
  });

  it("plans when nothing is persisted, and refuses a stored plan whose ids do not recompute", () => {
    expect(planOrReuse(undefined, () => buildActionEnvelope(plan()))).toEqual({ status: "planned", action: buildActionEnvelope(plan()) });
    const persisted = buildActionEnvelope(plan());
    expect(planOrReuse({ ...persisted, args: { ...persisted.args, taskId: "t2" } }, () => persisted)).toMatchObject({ status: "corrupt", field: "argumentsHash" });
    expect(planOrReuse({ ...persisted, scopeSnapshot: ["cat-a"] }, () => persisted)).toMatchObject({ status: "corrupt", field: "actionStableId" });
    expect(planOrReuse({ ...persisted, runKey: "b".repeat(64) }, () => persisted)).toMatchObject({ status: "corrupt", field: "operationId" });
  });
});
