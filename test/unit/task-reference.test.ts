import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isAmbiguous, matchTaskReference, rankTaskReferences, type TaskReferenceCandidate } from "../../src/core/tools/task-reference";

const task = (id: string, title: string, updatedAt = "2026-01-01T00:00:00.000Z", status = "open"): TaskReferenceCandidate => ({ id, title, status, categoryId: "cat", updatedAt });

describe("resolve_task_reference ranking", () => {
  it("ranks exact id over exact title over prefix over shared words", () => {
    const tasks = [task("t-words", "Fix the db migration test"), task("t-prefix", "Migration of users"), task("t-title", "migration"), task("migration", "Something else")];
    const { candidates } = rankTaskReferences("migration", tasks, 10);
    expect(candidates.map((candidate) => [candidate.taskId, candidate.match])).toEqual([
      ["migration", "exact_id"],
      ["t-title", "exact_title"],
      ["t-prefix", "prefix"],
      ["t-words", "token_overlap"],
    ]);
    expect(candidates.map((candidate) => candidate.score)).toEqual([...candidates.map((candidate) => candidate.score)].sort((a, b) => b - a));
  });

  it("compares case-, width- and space-insensitively and drops filler words", () => {
    expect(matchTaskReference("  The   MIGRATION task ", task("t", "Database migration"))?.match).toBe("token_overlap");
    expect(matchTaskReference("ＭＩＧＲＡＴＩＯＮ", task("t", "migration"))?.match).toBe("exact_title");
    expect(matchTaskReference("groceries", task("t", "Write report"))).toBeNull();
  });

  it("breaks ties by recency, newest first, then by id", () => {
    const tasks = [task("b", "Deploy", "2026-01-01T00:00:00.000Z"), task("a", "Deploy", "2026-01-01T00:00:00.000Z"), task("c", "Deploy", "2026-03-01T00:00:00.000Z")];
    expect(rankTaskReferences("deploy", tasks, 5).candidates.map((candidate) => candidate.taskId)).toEqual(["c", "a", "b"]);
  });

  it("is ambiguous for two equal titles or close fuzzy matches, not for an exact id or a lone exact title", () => {
    expect(rankTaskReferences("deploy", [task("a", "Deploy"), task("b", "Deploy")], 5).ambiguous).toBe(true);
    expect(rankTaskReferences("deploy", [task("a", "Deploy"), task("b", "Deploy docs")], 5).ambiguous).toBe(false);
    expect(rankTaskReferences("a", [task("a", "x"), task("b", "a")], 5).ambiguous).toBe(false);
    expect(rankTaskReferences("report", [task("a", "Quarterly report"), task("b", "Annual report")], 5).ambiguous).toBe(true);
    expect(rankTaskReferences("report", [task("a", "Quarterly report")], 5).ambiguous).toBe(false);
    expect(isAmbiguous([])).toBe(false);
  });

  it("is deterministic whatever the input order, with scores in [0, 1]", () => {
    const titles = fc.constantFrom("Deploy", "deploy docs", "Write report", "report", "Fix migration", "migration", "groceries");
    const tasksArb = fc.uniqueArray(fc.record({ id: fc.constantFrom("a", "b", "c", "d", "e", "f"), title: titles, updatedAt: fc.constantFrom("2026-01-01", "2026-02-01") }), { selector: (t) => t.id, maxLength: 6 });
    fc.assert(
      fc.property(tasksArb, fc.constantFrom("deploy", "report", "the migration", "a", "x"), (rows, reference) => {
        const tasks = rows.map((row) => task(row.id, row.title, row.updatedAt));
        const forward = rankTaskReferences(reference, tasks, 10);
        const backward = rankTaskReferences(reference, [...tasks].reverse(), 10);
        expect(backward).toEqual(forward);
        for (const candidate of forward.candidates) expect(candidate.score >= 0 && candidate.score <= 1).toBe(true);
      }),
    );
  });
});
