import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));

/** The request was killed after its effect and before its answer was stored: the claim stays unanswered. */
const loseAnswer = (tenantId: string, key: string) =>
  runInDurableObject(tenantDo(tenantId), (_instance, state) => state.storage.sql.exec("UPDATE idempotency SET status = NULL, response = NULL WHERE key = ?", key).rowsWritten);

/** Moves the claim's time back past the lease, as the clock would (no minute-long sleep). */
const lapseLease = (tenantId: string, key: string) =>
  runInDurableObject(tenantDo(tenantId), (_instance, state) =>
    state.storage.sql.exec("UPDATE idempotency SET created_at = ? WHERE key = ?", new Date(Date.now() - (config.idempotency.leaseSeconds + 1) * 1000).toISOString(), key).rowsWritten,
  );

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

  describe("a claim is a lease", () => {
    it("a create killed before its answer holds the key only for the lease; then a retry proceeds and finds the same agent", async () => {
      const { tenantId, key } = await createTenant();
      const headers = { "idempotency-key": "create-then-die" };
      const body = { kind: "coach", displayName: "Coach" };
      const first = await api("POST", "/v1/agents", { key, headers, body });
      expect(first.status).toBe(201);
      expect(await loseAnswer(tenantId, "create-then-die")).toBe(1);

      const held = await api("POST", "/v1/agents", { key, headers, body });
      expect(held.status).toBe(409);
      expect(held.body.code).toBe("idempotency_in_progress");

      expect(await lapseLease(tenantId, "create-then-die")).toBe(1);
      const retried = await api("POST", "/v1/agents", { key, headers, body });
      expect(retried.status).toBe(201);
      expect(retried.body.id).toBe(first.body.id);
      expect(retried.headers.get("idempotent-replayed")).toBeNull();
      const replayed = await api("POST", "/v1/agents", { key, headers, body });
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(replayed.body.id).toBe(first.body.id);
      expect((await api("GET", "/v1/agents", { key })).body.data).toHaveLength(1);
    });

    it("a message killed before its answer is retried after the lease and runs once", async () => {
      const { tenantId, key } = await createTenant();
      const agent = await createAgent(key);
      const headers = { "idempotency-key": "turn-then-die" };
      const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body: { text: "once" } });
      expect(first.status).toBe(202);
      await waitForRun(key, agent.id, first.body.runKey);
      await loseAnswer(tenantId, "turn-then-die");
      expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body: { text: "once" } })).body.code).toBe("idempotency_in_progress");
      await lapseLease(tenantId, "turn-then-die");
      const retried = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body: { text: "once" } });
      expect(retried.status).toBe(202);
      expect(retried.body.runKey).toBe(first.body.runKey);
      expect((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data).toHaveLength(1);
      expect((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data).toHaveLength(2);
    });
  });
});
