import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  evaluatePredicate,
  parsePredicate,
  predicateSchema,
  predicateScope,
  resolvePath,
  type Predicate,
  type PredicateScalar,
} from "../../src/core/wakes/predicate";

const gymTask = predicateScope("task", { id: "t1", categoryId: "gym", status: "open", estimate: 30, done: false, tags: ["a", "b"], dueAt: null });
const gymChecklist = predicateScope("checklist", { id: "c1", categoryId: "gym" });

function nest(depth: number): unknown {
  let node: unknown = { exists: "task.id" };
  for (let i = 1; i < depth; i++) node = { and: [node] };
  return node;
}

describe("evaluatePredicate", () => {
  it("matches the spec example: a task whose categoryId is gym", () => {
    const predicate: Predicate = { eq: ["task.categoryId", "gym"] };
    expect(evaluatePredicate(predicate, gymTask)).toBe(true);
    expect(evaluatePredicate(predicate, predicateScope("task", { categoryId: "work" }))).toBe(false);
  });

  it("roots paths at the entity type, so another kind of entity cannot satisfy a task predicate", () => {
    expect(evaluatePredicate({ eq: ["task.categoryId", "gym"] }, gymChecklist)).toBe(false);
    expect(evaluatePredicate({ neq: ["task.categoryId", "work"] }, gymChecklist)).toBe(false);
    expect(evaluatePredicate({ exists: "task" }, gymChecklist)).toBe(false);
  });

  it("implements each operator", () => {
    const cases: Array<[Predicate, boolean]> = [
      [{ eq: ["task.estimate", 30] }, true],
      [{ eq: ["task.done", false] }, true],
      [{ neq: ["task.status", "done"] }, true],
      [{ neq: ["task.status", "open"] }, false],
      [{ in: ["task.status", ["open", "blocked"]] }, true],
      [{ in: ["task.status", ["done"]] }, false],
      [{ exists: "task.categoryId" }, true],
      [{ exists: "task.missing" }, false],
      [{ and: [{ eq: ["task.categoryId", "gym"] }, { eq: ["task.status", "open"] }] }, true],
      [{ and: [{ eq: ["task.categoryId", "gym"] }, { eq: ["task.status", "done"] }] }, false],
      [{ or: [{ eq: ["task.categoryId", "work"] }, { eq: ["task.status", "open"] }] }, true],
      [{ or: [{ eq: ["task.categoryId", "work"] }, { eq: ["task.status", "done"] }] }, false],
      [{ eq: ["task.tags.1", "b"] }, true],
      [{ exists: "task.tags.2" }, false],
    ];
    for (const [predicate, expected] of cases) expect(evaluatePredicate(predicate, gymTask), JSON.stringify(predicate)).toBe(expected);
  });

  it("never coerces types", () => {
    expect(evaluatePredicate({ eq: ["task.estimate", "30"] }, gymTask)).toBe(false);
    expect(evaluatePredicate({ in: ["task.done", [0, "false"]] }, gymTask)).toBe(false);
    expect(evaluatePredicate({ eq: ["task.tags", "a"] }, gymTask)).toBe(false);
  });

  it("treats null and missing as absent: no comparison holds, neq included", () => {
    expect(evaluatePredicate({ exists: "task.dueAt" }, gymTask)).toBe(false);
    expect(evaluatePredicate({ neq: ["task.dueAt", "2024-01-01"] }, gymTask)).toBe(false);
    expect(evaluatePredicate({ neq: ["task.nope", 1] }, gymTask)).toBe(false);
  });

  it("reads only own properties", () => {
    expect(resolvePath(gymTask, "task.constructor")).toBeUndefined();
    expect(resolvePath(gymTask, "task.toString")).toBeUndefined();
    expect(resolvePath(gymTask, "task.tags.length")).toBeUndefined();
    expect(resolvePath(JSON.parse('{"task":{"__proto__":{"x":1}}}'), "task.__proto__.x")).toBe(1);
    expect(resolvePath({ task: Object.create({ inherited: "gym" }) }, "task.inherited")).toBeUndefined();
  });
});

describe("parsePredicate", () => {
  it("accepts the operators and returns the predicate unchanged", () => {
    const predicate = { and: [{ eq: ["task.categoryId", "gym"] }, { or: [{ in: ["task.status", ["open"]] }, { exists: "task.dueAt" }] }] };
    expect(parsePredicate(predicate)).toEqual({ ok: true, predicate });
  });

  it("rejects malformed predicates with a located message", () => {
    const cases: Array<[unknown, string]> = [
      [{ gt: ["a", 1] }, "predicate: must be an object with exactly one of eq, neq, in, exists, and, or"],
      [{ eq: ["a", 1], exists: "a" }, "predicate: must be an object with exactly one of"],
      [[], "predicate: must be an object"],
      [{ eq: ["task.categoryId"] }, "predicate.eq: eq takes [path, value]"],
      [{ eq: ["task.categoryId", { nested: true }] }, "predicate.eq: value must be a string, number or boolean"],
      [{ eq: ["task.categoryId", null] }, "predicate.eq: value must be a string, number or boolean"],
      [{ in: ["task.status", []] }, "predicate.in: in takes 1 to 64 values"],
      [{ exists: "task..id" }, "predicate.exists: path segments must match"],
      [{ exists: "task.a b" }, "predicate.exists: path segments must match"],
      [{ and: [] }, "predicate.and: must list 1 to 16 predicates"],
      [{ or: [{ exists: "task.id" }, { exists: 3 }] }, "predicate.or[1].exists: path must be a non-empty string"],
      [{ eq: ["a.b.c.d.e.f.g.h.i", 1] }, "path must have at most 8 segments"],
    ];
    for (const [input, message] of cases) {
      const result = parsePredicate(input);
      expect(result, JSON.stringify(input)).toMatchObject({ ok: false, code: "invalid_predicate" });
      if (!result.ok) expect(result.message).toContain(message);
    }
  });

  it("bounds nesting depth at 8 and size at 64 operators", () => {
    expect(parsePredicate(nest(8)).ok).toBe(true);
    expect(parsePredicate(nest(9))).toMatchObject({ ok: false, message: expect.stringContaining("nesting is deeper than 8 levels") });
    const wide = (n: number) => ({ or: Array.from({ length: n }, () => ({ and: [{ exists: "task.id" }, { exists: "task.id" }, { exists: "task.id" }] })) });
    expect(parsePredicate(wide(15)).ok).toBe(true); // 1 + 15 * 4 = 61 operators
    expect(parsePredicate(wide(16))).toMatchObject({ ok: false, message: expect.stringContaining("predicate: a predicate may have at most 64 operators") });
  });

  it("returns an error, not a stack overflow, for hostile nesting", () => {
    expect(parsePredicate(nest(200_000)).ok).toBe(false);
  });

  it("yields a recursive JSON Schema for the API document", () => {
    const schema = JSON.stringify(z.toJSONSchema(predicateSchema, { io: "input" }));
    expect(schema).toContain('"$ref"');
    expect(schema).toContain('"exists"');
  });
});

const scalarArb: fc.Arbitrary<PredicateScalar> = fc.oneof(fc.constantFrom("gym", "work", "open", ""), fc.integer({ min: -2, max: 2 }), fc.boolean());
const pathArb = fc.constantFrom("task.categoryId", "task.status", "task.estimate", "task.tags.0", "task.meta.flag", "checklist.id", "task");
const { predicate: predicateArb } = fc.letrec<{ predicate: Predicate }>((tie) => ({
  predicate: fc.oneof(
    { depthSize: "small", maxDepth: 6 },
    fc.tuple(pathArb, scalarArb).map(([path, value]): Predicate => ({ eq: [path, value] })),
    fc.tuple(pathArb, scalarArb).map(([path, value]): Predicate => ({ neq: [path, value] })),
    fc.tuple(pathArb, fc.array(scalarArb, { minLength: 1, maxLength: 4 })).map(([path, values]): Predicate => ({ in: [path, values] })),
    pathArb.map((path): Predicate => ({ exists: path })),
    fc.array(tie("predicate"), { minLength: 1, maxLength: 3 }).map((children): Predicate => ({ and: children })),
    fc.array(tie("predicate"), { minLength: 1, maxLength: 3 }).map((children): Predicate => ({ or: children })),
  ),
}));
const recordArb = fc.record(
  {
    categoryId: fc.oneof(scalarArb, fc.constant(null)),
    status: scalarArb,
    estimate: fc.oneof(scalarArb, fc.constant(null)),
    tags: fc.array(scalarArb, { maxLength: 2 }),
    meta: fc.record({ flag: scalarArb }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const scopeArb = fc.tuple(fc.constantFrom("task", "checklist"), recordArb).map(([type, record]) => predicateScope(type, record));
const small = (p: Predicate) => parsePredicate(p).ok;

describe("evaluatePredicate properties", () => {
  it("is deterministic: same answer on repeat and with the record's keys in another order", () => {
    fc.assert(
      fc.property(predicateArb.filter(small), scopeArb, (predicate, scope) => {
        const first = evaluatePredicate(predicate, scope);
        const reordered = JSON.parse(JSON.stringify(scope), (_key, value) =>
          value && typeof value === "object" && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).reverse()) : value,
        );
        expect(evaluatePredicate(predicate, scope)).toBe(first);
        expect(evaluatePredicate(predicate, reordered)).toBe(first);
      }),
      { numRuns: 500 },
    );
  });

  it("gives and/or the meaning of every/some, and neq the meaning of exists-and-not-eq", () => {
    fc.assert(
      fc.property(fc.array(predicateArb, { minLength: 1, maxLength: 3 }), pathArb, scalarArb, scopeArb, (children, path, value, scope) => {
        const results = children.map((child) => evaluatePredicate(child, scope));
        expect(evaluatePredicate({ and: children }, scope)).toBe(results.every(Boolean));
        expect(evaluatePredicate({ or: children }, scope)).toBe(results.some(Boolean));
        const present = evaluatePredicate({ exists: path }, scope);
        expect(evaluatePredicate({ neq: [path, value] }, scope)).toBe(present && !evaluatePredicate({ eq: [path, value] }, scope));
        expect(evaluatePredicate({ in: [path, [value]] }, scope)).toBe(evaluatePredicate({ eq: [path, value] }, scope));
      }),
    );
  });

  it("accepts every well-formed predicate within the bounds", () => {
    fc.assert(
      fc.property(predicateArb, (predicate) => {
        const json = JSON.stringify(predicate);
        const depth = (p: Predicate): number => ("and" in p ? 1 + Math.max(...p.and.map(depth)) : "or" in p ? 1 + Math.max(...p.or.map(depth)) : 1);
        const size = (p: Predicate): number => ("and" in p ? 1 + p.and.reduce((s, c) => s + size(c), 0) : "or" in p ? 1 + p.or.reduce((s, c) => s + size(c), 0) : 1);
        expect(parsePredicate(JSON.parse(json)).ok).toBe(depth(predicate) <= 8 && size(predicate) <= 64);
      }),
    );
  });
});
