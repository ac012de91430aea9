import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

describe("Idempotency-Key", () => {
  it("replays the first answer for the same key and body, with one effect", async () => {
    const { key } = await createTenant();
    const headers = { "idempotency-key": "create-coach-1" };
    const first = await api("POST", "/v1/agents", { key, headers, body: { kind: "coach", displayName: "Coach" } });
    const second = await api("POST", "/v1/agents", { key, headers, body: { kind: "coach", displayName: "Coach" } });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect((await api("GET", "/v1/agents", { key })).body.data).toHaveLength(1);
  });

  it("answers 409 for the same key with a different body", async () => {
    const { key } = await createTenant();
    const headers = { "idempotency-key": "k-2" };
    await api("POST", "/v1/agents", { key, headers, body: { kind: "coach", displayName: "One" } });
    const conflict = await api("POST", "/v1/agents", { key, headers, body: { kind: "coach", displayName: "Two" } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe("idempotency_conflict");
  });

  it("a retried message maps to the same runKey and runs once", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const headers = { "idempotency-key": "turn-1" };
    const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body: { text: "once" } });
    await waitForRun(key, agent.id, first.body.runKey);
    const again = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body: { text: "once" } });
    expect(again.body.runKey).toBe(first.body.runKey);
    const runs = await api("GET", `/v1/agents/${agent.id}/runs`, { key });
    expect(runs.body.data).toHaveLength(1);
    const history = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(history.body.data).toHaveLength(2);
  });

  it("is scoped to the tenant: another tenant's identical key is independent", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const headers = { "idempotency-key": "shared" };
    const ra = await api("POST", "/v1/agents", { key: a.key, headers, body: { kind: "coach", displayName: "A" } });
    const rb = await api("POST", "/v1/agents", { key: b.key, headers, body: { kind: "coach", displayName: "B" } });
    expect(rb.status).toBe(201);
    expect(rb.body.id).not.toBe(ra.body.id);
  });

  it("rejects a malformed key", async () => {
    const { key } = await createTenant();
    const res = await api("POST", "/v1/agents", { key, headers: { "idempotency-key": "bad key with spaces" }, body: { kind: "c", displayName: "C" } });
    expect(res.status).toBe(400);
  });
});
