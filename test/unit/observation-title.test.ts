import { describe, expect, it } from "vitest";
import { observationTitle } from "../../src/core/wakes/observation-title";
import { projectEntity, type FetchedEntity } from "../../src/core/wakes/wake-observation";

const journal = (
  id: string,
  type: string,
  categoryId: string | null,
  data: Record<string, unknown>,
  deletedAt: string | null = null,
): FetchedEntity => ({
  kind: "journal",
  id,
  type,
  categoryId,
  parentId: null,
  version: 1,
  updatedAt: "2026-01-01T00:00:00.000Z",
  deletedAt,
  data,
});
const data = (entities: FetchedEntity[], matched: string[], allowed = ["c_1"]) => ({
  entities: entities.map((entity) => projectEntity(entity, allowed)),
  trigger: { matchedEntityIds: matched },
});

describe("observation title (what a person reads of a subscription wake)", () => {
  it("names the matched task by its title and its category by its name, never by ids", () => {
    const title = observationTitle(
      data(
        [journal("t_1", "task", "c_1", { title: "Run 5k" }), journal("c_1", "category", "c_1", { name: "Demo" })],
        ["t_1"],
      ),
    );
    expect(title).toBe("Task “Run 5k” changed in “Demo”");
    expect(title).not.toMatch(/t_1|c_1/);
  });

  it("says deleted, words the type, and bounds the list", () => {
    const items = ["a", "b", "c", "d"].map((id) =>
      journal(id, "checklistItem", "c_1", { label: `Item ${id}` }, "2026-01-02T00:00:00.000Z"),
    );
    expect(observationTitle(data(items, []))).toBe(
      ["a", "b", "c"].map((id) => `Checklist item “Item ${id}” deleted`).join("; ") + "; and 1 more",
    );
  });

  it("shows nothing withheld from the agent: an out-of-scope entity is named only by its type", () => {
    const title = observationTitle(data([journal("t_9", "task", "secret", { title: "Private plan" })], ["t_9"]));
    expect(title).toBe("A task outside this agent's categories changed");
  });

  it("is absent when there is no entity to name (the summary is shown instead)", () => {
    expect(observationTitle({ entities: [] })).toBeNull();
    expect(observationTitle(undefined)).toBeNull();
    expect(observationTitle(data([journal("t_1", "task", "c_1", {})], ["other"]))).toBeNull();
  });
});
