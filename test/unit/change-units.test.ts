import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildNotificationBatch,
  canonicalChangeUnit,
  changeUnitKey,
  changeUnits,
  coalesceBatches,
  logicalChangeKey,
  subscriptionWake,
  validateChangeUnit,
  verifyBatchProvenance,
  type ChangeUnit,
  type NotificationBatch,
} from "../../src/core/wakes/change-units";
import { tokenKey, tokens, type TypedToken } from "../../src/core/wakes/tokens";

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

const unpiped = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes("|"));
const unitArb: fc.Arbitrary<ChangeUnit> = fc.record({
  origin: fc.constantFrom("local" as const, "webhook" as const, "event" as const),
  hostId: fc.oneof(fc.constantFrom("tenant_1", "tenant_2"), unpiped),
  counter: fc.oneof(fc.nat({ max: 5 }), fc.maxSafeNat()),
  payloadType: fc.oneof(fc.constantFrom("task", "checklist"), unpiped),
  payloadId: fc.oneof(fc.constantFrom("t1", "t2", "a|b"), fc.string({ minLength: 1, maxLength: 12 })),
});
const tokenArb: fc.Arbitrary<TypedToken> = fc.oneof(
  fc.constantFrom("TASK", "CHECKLIST", "RATING").map((v) => tokens.semanticKey(v)),
  fc.constantFrom("t1", "t2", "c1").map((v) => tokens.entityId(v)),
  fc.constantFrom("run", "swim").map((v) => tokens.subtype("workout.type", v)),
);

function batchOf(units: ChangeUnit[], typedTokens: TypedToken[] = []): NotificationBatch {
  const result = buildNotificationBatch({ changeUnits: units, tokens: typedTokens });
  if (!result.ok) throw new Error(result.message);
  return result.batch;
}

const taskWrite = changeUnits.local("tenant_1", 42, "task", "task_9");

describe("change unit keys (known answers from node:crypto)", () => {
  it("canonicalises as v1|origin|hostId|counter|payloadType|payloadId", () => {
    expect(canonicalChangeUnit(taskWrite)).toBe("v1|local|tenant_1|42|task|task_9");
  });

  it("changeUnitKey is sha256 hex of the canonical string", () => {
    expect(changeUnitKey(taskWrite)).toBe(sha("v1|local|tenant_1|42|task|task_9"));
  });

  it("logicalChangeKey is sha256 hex of v1| + sorted unique keys joined by commas", () => {
    const a = sha("v1|local|tenant_1|42|task|task_9");
    const b = sha("v1|local|tenant_1|42|checklist|cl_1");
    const [first, second] = [a, b].sort();
    expect(logicalChangeKey([a, b, a])).toBe(sha(`v1|${first},${second}`));
    expect(logicalChangeKey([a])).toBe(sha(`v1|${a}`));
  });

  it("agrees with node:crypto on arbitrary units", () => {
    fc.assert(
      fc.property(fc.array(unitArb, { minLength: 1, maxLength: 6 }), (units) => {
        const keys = units.map((u) => sha(`v1|${u.origin}|${u.hostId}|${u.counter}|${u.payloadType}|${u.payloadId}`));
        expect(units.map(changeUnitKey)).toEqual(keys);
        expect(batchOf(units).logicalChangeKey).toBe(sha("v1|" + [...new Set(keys)].sort().join(",")));
      }),
    );
  });

  it("refuses to derive a key from nothing", () => {
    expect(() => logicalChangeKey([])).toThrow(/missing_change_provenance/);
  });
});

describe("validateChangeUnit", () => {
  it("rejects fields that would make the unescaped canonical string ambiguous", () => {
    expect(validateChangeUnit({ ...taskWrite, hostId: "a|b" })).toMatchObject({ ok: false, code: "invalid_change_unit" });
    expect(validateChangeUnit({ ...taskWrite, payloadType: "task|x" }).ok).toBe(false);
    expect(validateChangeUnit({ ...taskWrite, payloadId: "a|b" }).ok).toBe(true);
  });

  it("rejects bad origins, counters and empty fields", () => {
    for (const patch of [{ origin: "sync" }, { counter: -1 }, { counter: 1.5 }, { counter: 2 ** 53 }, { hostId: "" }, { payloadId: "" }]) {
      expect(validateChangeUnit({ ...taskWrite, ...patch }).ok).toBe(false);
    }
  });

  it("keeps the canonical form injective on valid units", () => {
    fc.assert(
      fc.property(unitArb, unitArb, (a, b) => {
        expect(canonicalChangeUnit(a) === canonicalChangeUnit(b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
    );
  });
});

describe("buildNotificationBatch", () => {
  it("derives the same logicalChangeKey under any permutation and duplication of its units", () => {
    fc.assert(
      fc.property(
        fc.array(unitArb, { minLength: 1, maxLength: 8 }).chain((units) =>
          fc.tuple(
            fc.constant(units),
            fc.shuffledSubarray(units, { minLength: units.length, maxLength: units.length }),
            fc.array(fc.constantFrom(...units), { maxLength: 8 }),
          ),
        ),
        ([units, permuted, duplicates]) => {
          const original = batchOf(units);
          const noisy = batchOf([...duplicates, ...permuted, ...duplicates]);
          expect(noisy.logicalChangeKey).toBe(original.logicalChangeKey);
          expect(noisy.changeUnitKeys).toEqual(original.changeUnitKeys);
        },
      ),
    );
  });

  it("stores sorted unique evidence and a canonical token set", () => {
    fc.assert(
      fc.property(fc.array(unitArb, { minLength: 1, maxLength: 6 }), fc.array(tokenArb, { maxLength: 10 }), (units, typed) => {
        const batch = batchOf(units, typed);
        expect(batch.changeUnitKeys).toEqual([...new Set(units.map(changeUnitKey))].sort());
        expect(batch.typedTokens.map(tokenKey)).toEqual([...new Set(typed.map(tokenKey))].sort());
      }),
    );
  });

  it("gives different unit sets different keys", () => {
    fc.assert(
      fc.property(fc.array(unitArb, { minLength: 1, maxLength: 4 }), fc.array(unitArb, { minLength: 1, maxLength: 4 }), (a, b) => {
        const sameSet = JSON.stringify([...new Set(a.map(canonicalChangeUnit))].sort()) === JSON.stringify([...new Set(b.map(canonicalChangeUnit))].sort());
        expect(batchOf(a).logicalChangeKey === batchOf(b).logicalChangeKey).toBe(sameSet);
      }),
    );
  });

  it("fails closed without provenance and on invalid units or tokens", () => {
    expect(buildNotificationBatch({ changeUnits: [], tokens: [tokens.semanticKey("TASK")] })).toMatchObject({
      ok: false,
      code: "missing_change_provenance",
    });
    expect(buildNotificationBatch({ changeUnits: [{ ...taskWrite, hostId: "" }], tokens: [] })).toMatchObject({
      ok: false,
      code: "invalid_change_unit",
      message: expect.stringContaining("changeUnits[0]: hostId must not be empty"),
    });
    const forged = { tokenClass: "semanticKey", tokenNamespace: "x", tokenValue: "TASK" } as unknown as TypedToken;
    expect(buildNotificationBatch({ changeUnits: [taskWrite], tokens: [forged] })).toMatchObject({ ok: false, code: "invalid_token" });
  });

  it("keeps localBatchId as a diagnostic that does not affect identity", () => {
    const a = buildNotificationBatch({ changeUnits: [taskWrite], tokens: [], localBatchId: "device-a-1" });
    const b = buildNotificationBatch({ changeUnits: [taskWrite], tokens: [], localBatchId: "device-b-7" });
    expect(a.ok && b.ok && a.batch.logicalChangeKey === b.batch.logicalChangeKey).toBe(true);
    expect(a.ok && a.batch.localBatchId).toBe("device-a-1");
  });
});

describe("changeUnits constructors", () => {
  it("gives a redelivered webhook or event the same unit, and distinct deliveries distinct ones", () => {
    expect(changeUnitKey(changeUnits.webhook("src_1", "d1"))).toBe(changeUnitKey(changeUnits.webhook("src_1", "d1")));
    expect(changeUnitKey(changeUnits.webhook("src_1", "d1"))).not.toBe(changeUnitKey(changeUnits.webhook("src_1", "d2")));
    expect(changeUnitKey(changeUnits.event("crm", "d1"))).toBe(changeUnitKey(changeUnits.event("crm", "d1")));
    expect(changeUnitKey(changeUnits.event("a|b", "c"))).not.toBe(changeUnitKey(changeUnits.event("a", "b|c")));
    expect(validateChangeUnit(changeUnits.event("weird|source", "id|1")).ok).toBe(true);
  });
});

describe("coalesceBatches", () => {
  const poolArb = fc.array(fc.array(unitArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 });

  it("never merges batches with different logicalChangeKeys and loses no tokens", () => {
    fc.assert(
      fc.property(
        poolArb.chain((pool) => fc.array(fc.tuple(fc.constantFrom(...pool), fc.array(tokenArb, { maxLength: 4 })), { maxLength: 10 })),
        (entries) => {
          const inputs = entries.map(([units, typed]) => batchOf(units, typed));
          const output = coalesceBatches(inputs);
          const inputKeys = [...new Set(inputs.map((b) => b.logicalChangeKey))];
          expect(output.map((b) => b.logicalChangeKey)).toEqual(inputKeys);
          for (const merged of output) {
            const sources = inputs.filter((b) => b.logicalChangeKey === merged.logicalChangeKey);
            const expected = [...new Set(sources.flatMap((b) => b.typedTokens.map(tokenKey)))].sort();
            expect(merged.typedTokens.map(tokenKey)).toEqual(expected);
            expect(merged.changeUnitKeys).toEqual(sources[0]!.changeUnitKeys);
          }
        },
      ),
    );
  });

  it("keeps two envelopes from the same tick apart when their keys differ", () => {
    const a = batchOf([taskWrite], [tokens.semanticKey("TASK")]);
    const b = batchOf([changeUnits.local("tenant_1", 43, "task", "task_9")], [tokens.semanticKey("TASK")]);
    expect(coalesceBatches([a, b, a])).toHaveLength(2);
  });

  it("does not let an envelope with a matching key but different evidence absorb another", () => {
    const a = batchOf([taskWrite], [tokens.semanticKey("TASK")]);
    const forged = { ...a, changeUnitKeys: [sha("other")], typedTokens: [tokens.entityId("x")] };
    expect(coalesceBatches([a, forged])).toHaveLength(2);
  });
});

describe("subscriptionWake", () => {
  const batch = batchOf([taskWrite], [tokens.semanticKey("TASK")]);
  const target = { agentId: "coach", subscriptionId: "sub_1" };

  it("anchors the runKey to the logicalChangeKey (H(agentId, subscriptionId, logicalChangeKey))", () => {
    const result = subscriptionWake(batch, target);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const runKey = sha(`v1|coach|sub_1|${batch.logicalChangeKey}`);
    expect(result.wake).toEqual({
      agentId: "coach",
      subscriptionId: "sub_1",
      reason: "subscription",
      runKey,
      threadId: `coach:run:${runKey}`,
      logicalChangeKey: batch.logicalChangeKey,
      changeUnitKeys: batch.changeUnitKeys,
    });
  });

  it("a subscription with a sessionId wakes into that conversation; the runKey is the same", () => {
    const plain = subscriptionWake(batch, target);
    const inSession = subscriptionWake(batch, { ...target, sessionId: "w-visitor" });
    expect(plain.ok && inSession.ok).toBe(true);
    if (!plain.ok || !inSession.ok) return;
    expect(inSession.wake).toEqual({ ...plain.wake, threadId: "coach:session:w-visitor" });
  });

  it("fails closed with missing_change_provenance when there are no change units", () => {
    for (const bad of [{ ...batch, changeUnitKeys: [] }, { logicalChangeKey: batch.logicalChangeKey }, { changeUnitKeys: null, logicalChangeKey: null }, {}]) {
      expect(subscriptionWake(bad, target)).toMatchObject({ ok: false, code: "missing_change_provenance" });
    }
  });

  it("rejects evidence that does not prove the key", () => {
    const other = sha("x");
    const cases = [
      { ...batch, logicalChangeKey: other },
      { ...batch, changeUnitKeys: ["NOT-HEX"] },
      { ...batch, changeUnitKeys: [...batch.changeUnitKeys, ...batch.changeUnitKeys] },
      { logicalChangeKey: logicalChangeKey([other, batch.changeUnitKeys[0]!]), changeUnitKeys: [other, batch.changeUnitKeys[0]!].sort().reverse() },
    ];
    for (const bad of cases) expect(verifyBatchProvenance(bad)).toMatchObject({ ok: false, code: "invalid_change_provenance" });
  });
});
