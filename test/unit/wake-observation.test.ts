import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tokens } from "../../src/core/wakes/tokens";
import { inCategoryScope, observationSummary, projectEntity, subscriptionObservation, OBSERVATION_LIMITS, type FetchedEntity } from "../../src/core/wakes/wake-observation";

const task = (id: string, categoryId: string | null, data: Record<string, unknown> = {}): Extract<FetchedEntity, { kind: "journal" }> => ({
  kind: "journal",
  id,
  type: "task",
  categoryId,
  parentId: null,
  version: 3,
  updatedAt: "2025-03-01T12:00:00.000Z",
  deletedAt: null,
  data,
});

const trigger = { subscriptionId: "sub_1", logicalChangeKey: "a".repeat(64), matchedTokenKeys: ["semanticKey|-|TASK"], matchedEntityIds: ["t_1"] };

describe("subscriptionObservation", () => {
  it("summarises a journal change as the spec example and carries tokens and the projected entity", () => {
    const batchTokens = [tokens.semanticKey("TASK"), tokens.entityId("t_1")];
    const observation = subscriptionObservation({
      tokens: batchTokens,
      entities: [task("t_1", "gym", { title: "Squats" })],
      allowedCategoryIds: ["gym"],
      source: "journal",
      origin: "local",
      trigger,
    });
    expect(observation.summary).toBe("TASK changed: task t_1 (categoryId gym)");
    expect(observation.data).toEqual({
      trigger: { ...trigger, source: "journal", origin: "local" },
      tokens: batchTokens,
      entities: [{ id: "t_1", type: "task", categoryId: "gym", parentId: null, version: 3, updatedAt: "2025-03-01T12:00:00.000Z", deleted: false, fields: { title: "Squats" } }],
    });
    expect("payload" in observation.data).toBe(false);
  });

  it("names the predicate-matched entities, listing related ones after them in the data", () => {
    const category: FetchedEntity = { ...task("gym", null), type: "category", data: { name: "Gym" } };
    const observation = subscriptionObservation({
      tokens: [tokens.semanticKey("TASK"), tokens.entityId("gym"), tokens.entityId("t_1")],
      entities: [category, task("t_1", "gym")],
      allowedCategoryIds: ["gym"],
      source: "journal",
      origin: "local",
      trigger,
    });
    expect(observation.summary).toBe("TASK changed: task t_1 (categoryId gym)");
    expect(observation.data.entities.map((entity) => entity.id)).toEqual(["t_1", "gym"]);
    const unfiltered = subscriptionObservation({ tokens: [], entities: [category, task("t_1", "gym")], allowedCategoryIds: ["gym"], source: "journal", origin: "local", trigger: { ...trigger, matchedEntityIds: [] } });
    expect(unfiltered.summary).toBe("Change: category gym; task t_1 (categoryId gym)");
  });

  it("names the external source when no entity changed, and carries the payload as data", () => {
    const observation = subscriptionObservation({ tokens: [tokens.semanticKey("WORKOUT")], entities: [], allowedCategoryIds: [], source: "event:gym-app", origin: "event", payload: { km: 5 }, trigger });
    expect(observation.summary).toBe("WORKOUT changed (event gym-app)");
    expect(observation.data.payload).toEqual({ km: 5 });
  });

  it("withholds entities outside the agent's categories, including uncategorised ones (deny by default)", () => {
    expect(projectEntity(task("t_2", "work", { secret: 1 }), ["gym"])).toEqual({ id: "t_2", type: "task", withheld: "out_of_scope" });
    expect(projectEntity(task("t_3", null, { secret: 1 }), ["gym"])).toEqual({ id: "t_3", type: "task", withheld: "out_of_scope" });
    expect(projectEntity(task("t_4", "gym"), [])).toEqual({ id: "t_4", type: "task", withheld: "out_of_scope" });
    expect(inCategoryScope({ ...task("gym", null), type: "category" }, ["gym"])).toBe(true);
    expect(observationSummary(["TASK"], [projectEntity(task("t_2", "work"), ["gym"])], "journal")).toBe("TASK changed: task t_2 (out of scope)");
  });

  it("shows only public directory fields of a changed agent", () => {
    const agent: FetchedEntity = { kind: "agent", id: "ag_1", agentKind: "planner", displayName: "Planner", lifecycle: "active" };
    expect(projectEntity(agent, [])).toEqual({ id: "ag_1", type: "agent", kind: "planner", displayName: "Planner", lifecycle: "active" });
    expect(observationSummary(["agentChangedNotification"], [projectEntity(agent, [])], "agent:ag_1")).toBe("agentChangedNotification changed: agent ag_1 (planner) (agent ag_1)");
  });

  it("never leaks withheld fields, and bounds the summary whatever the input", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 80 }), cat: fc.constantFrom("gym", "work", null), secret: fc.string() }), { maxLength: 40, selector: (row) => row.id }), (rows) => {
        const entities = rows.map((row) => task(row.id, row.cat, { secret: `S3CR3T${row.secret}` }));
        const observation = subscriptionObservation({ tokens: [tokens.semanticKey("TASK")], entities, allowedCategoryIds: ["gym"], source: "journal", origin: "local", trigger });
        expect(observation.summary.length).toBeLessThanOrEqual(OBSERVATION_LIMITS.summaryMaxLength);
        for (const projected of observation.data.entities) {
          const source = entities.find((entity) => entity.id === projected.id)!;
          if (source.categoryId !== "gym") expect(JSON.stringify(projected)).not.toContain("S3CR3T");
        }
      }),
    );
  });
});
