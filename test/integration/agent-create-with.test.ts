import { describe, expect, it } from "vitest";
import { api, createTenant } from "./helpers";

describe("creating an agent with subscriptions and timers", () => {
  it("creates them together, and bad ones are refused before anything exists", async () => {
    const { key } = await createTenant();
    const created = await api("POST", "/v1/agents", {
      key,
      body: {
        kind: "coach",
        displayName: "Coach",
        subscriptions: [{ tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }] }],
        timers: [{ name: "daily", spec: { kind: "cron", expr: "0 7 * * *", timeZone: "Europe/Berlin" } }],
      },
    });
    expect(created.status).toBe(201);
    const subs = await api("GET", `/v1/agents/${created.body.id}/subscriptions`, { key });
    expect(subs.body.data).toHaveLength(1);
    const timers = await api("GET", `/v1/agents/${created.body.id}/timers`, { key });
    expect(timers.body.data.map((t: any) => t.name)).toEqual(["daily"]);

    const bad = await api("POST", "/v1/agents", {
      key,
      body: { kind: "coach", displayName: "Bad", timers: [{ spec: { kind: "cron", expr: "0 25 * * *", timeZone: "UTC" } }] },
    });
    expect(bad.status).toBe(400);
    expect((await api("GET", "/v1/agents", { key })).body.data).toHaveLength(1);
  });
});
