import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually } from "./helpers";

/** Sorted: agents created in the same millisecond are ordered by their random ids. */
const names = (body: { data: Array<{ displayName: string }> }) => body.data.map((agent) => agent.displayName).sort();

describe("GET /v1/agents filters (lifecycle, mode, kind, text)", () => {
  it("narrows the list by each filter and by all of them together, paging over the filtered rows", async () => {
    const { key } = await createTenant("filters");
    const coach = await createAgent(key, { kind: "coach", displayName: "Morning Coach", mode: "interactive" });
    await createAgent(key, { kind: "planner", displayName: "Planner 100%", mode: "autonomous" });
    await createAgent(key, { kind: "coach", displayName: "Evening coach", mode: "hybrid" });
    await api("POST", `/v1/agents/${coach.id}/pause`, { key });

    // The directory learns the lifecycle from the agent's own report of the change.
    await eventually(async () => names((await api("GET", "/v1/agents?lifecycle=dormant", { key })).body).length === 1);
    expect(names((await api("GET", "/v1/agents?lifecycle=dormant", { key })).body)).toEqual(["Morning Coach"]);
    expect(names((await api("GET", "/v1/agents?mode=autonomous", { key })).body)).toEqual(["Planner 100%"]);
    expect(names((await api("GET", "/v1/agents?kind=coach", { key })).body)).toEqual([
      "Evening coach",
      "Morning Coach",
    ]);
    expect(names((await api("GET", "/v1/agents?q=COACH", { key })).body)).toEqual(["Evening coach", "Morning Coach"]);
    expect(names((await api("GET", `/v1/agents?q=${coach.id.slice(3, 12)}`, { key })).body)).toEqual(["Morning Coach"]);
    expect(names((await api("GET", "/v1/agents?kind=coach&lifecycle=active", { key })).body)).toEqual([
      "Evening coach",
    ]);

    const first = await api("GET", "/v1/agents?kind=coach&limit=1", { key });
    expect(first.body.data).toHaveLength(1);
    const second = await api(
      "GET",
      `/v1/agents?kind=coach&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { key },
    );
    expect([...names(first.body), ...names(second.body)].sort()).toEqual(["Evening coach", "Morning Coach"]);
  });

  it("treats LIKE's own characters in the text literally", async () => {
    const { key } = await createTenant("filters-like");
    await createAgent(key, { displayName: "Planner 100%" });
    await createAgent(key, { displayName: "Planner 1000" });
    await createAgent(key, { displayName: "a_b" });
    await createAgent(key, { displayName: "axb" });
    expect(names((await api("GET", `/v1/agents?q=${encodeURIComponent("100%")}`, { key })).body)).toEqual([
      "Planner 100%",
    ]);
    expect(names((await api("GET", "/v1/agents?q=a_b", { key })).body)).toEqual(["a_b"]);
  });

  it("refuses an unknown lifecycle or mode with a problem naming the field", async () => {
    const { key } = await createTenant("filters-bad");
    const bad = await api("GET", "/v1/agents?lifecycle=sleeping", { key });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("lifecycle");
    expect((await api("GET", "/v1/agents?mode=sometimes", { key })).status).toBe(400);
  });
});
