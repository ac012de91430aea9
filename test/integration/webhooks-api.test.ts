import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const RECEIVER = "http://127.0.0.1:9/hooks";

describe("/v1/webhooks (outbound endpoints)", () => {
  it("creates an endpoint with its secret shown once, lists and gets it without the secret, deletes it", async () => {
    const { key } = await createTenant("webhooks-crud");
    const created = await api("POST", "/v1/webhooks", { key, body: { url: RECEIVER, eventTypes: ["run.*", "message.appended"], description: "ops" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: RECEIVER, eventTypes: ["run.*", "message.appended"], description: "ops" });
    expect(created.body.secret).toMatch(/^whsec_/);
    const id = created.body.id as string;

    const got = await api("GET", `/v1/webhooks/${id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(created.body.secret);
    const listed = await api("GET", "/v1/webhooks", { key });
    expect(listed.body.data.map((e: any) => e.id)).toEqual([id]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);

    expect((await api("DELETE", `/v1/webhooks/${id}`, { key })).status).toBe(200);
    expect((await api("GET", `/v1/webhooks/${id}`, { key })).status).toBe(404);
    expect((await api("GET", `/v1/webhooks/${id}/deliveries`, { key })).status).toBe(404);
    expect((await api("DELETE", `/v1/webhooks/${id}`, { key })).status).toBe(404);
  });

  it("refuses non-https URLs (http only to loopback in test deployments) and unknown event types, naming the field", async () => {
    const { key } = await createTenant("webhooks-validation");
    const plain = await api("POST", "/v1/webhooks", { key, body: { url: "http://example.com/hook", eventTypes: ["*"] } });
    expect(plain.status).toBe(400);
    expect(plain.body.detail).toMatch(/url: plain http/);
    const ftp = await api("POST", "/v1/webhooks", { key, body: { url: "ftp://example.com/hook", eventTypes: ["*"] } });
    expect(ftp.status).toBe(400);
    const badType = await api("POST", "/v1/webhooks", { key, body: { url: "https://example.com/hook", eventTypes: ["text.delta", "run.*"] } });
    expect(badType.status).toBe(400);
    expect(badType.body.code).toBe("validation_failed");
    expect(badType.body.errors[0].path).toBe("eventTypes.0");
    const empty = await api("POST", "/v1/webhooks", { key, body: { url: "https://example.com/hook", eventTypes: [] } });
    expect(empty.status).toBe(400);
    expect((await api("GET", "/v1/webhooks", { key })).body.data).toEqual([]);
  });

  it("replays a create with the same Idempotency-Key (same id and secret) and refuses a different body with 409", async () => {
    const { key } = await createTenant("webhooks-idem");
    const body = { url: "https://example.com/hook", eventTypes: ["*"] };
    const first = await api("POST", "/v1/webhooks", { key, body, headers: { "idempotency-key": "wh-1" } });
    const again = await api("POST", "/v1/webhooks", { key, body, headers: { "idempotency-key": "wh-1" } });
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await api("POST", "/v1/webhooks", { key, body: { ...body, eventTypes: ["run.*"] }, headers: { "idempotency-key": "wh-1" } });
    expect(other.status).toBe(409);
    expect((await api("GET", "/v1/webhooks", { key })).body.data).toHaveLength(1);
  });

  it("is admin-scoped, API-key-only, and tenant-isolated (404 across tenants)", async () => {
    const a = await createTenant("webhooks-a");
    const b = await createTenant("webhooks-b");
    const created = await api("POST", "/v1/webhooks", { key: a.key, body: { url: "https://127.0.0.1:9/a", eventTypes: ["*"] } });
    expect((await api("GET", `/v1/webhooks/${created.body.id}`, { key: b.key })).status).toBe(404);
    expect((await api("DELETE", `/v1/webhooks/${created.body.id}`, { key: b.key })).status).toBe(404);
    expect((await api("GET", `/v1/webhooks/${created.body.id}/deliveries`, { key: b.key })).status).toBe(404);
    const reader = await api("POST", "/v1/keys", { key: a.key, body: { scopes: ["agents:read"] } });
    expect((await api("GET", "/v1/webhooks", { key: reader.body.key })).status).toBe(403);
    const agent = await createAgent(a.key);
    const minted = await api("POST", "/v1/tokens", { key: a.key, body: { sub: "u", agents: [agent.id] } });
    expect((await api("GET", "/v1/webhooks", { key: minted.body.token })).status).toBe(403);
  });

  it("records one delivery per matching event, only for the types the endpoint asked for", async () => {
    const { key } = await createTenant("webhooks-match");
    const endpoint = await api("POST", "/v1/webhooks", { key, body: { url: RECEIVER, eventTypes: ["run.completed"] } });
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const page = await eventually(async () => {
      const res = await api("GET", `/v1/webhooks/${endpoint.body.id}/deliveries`, { key });
      return res.body.data.length > 0 ? res.body : undefined;
    });
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ endpointId: endpoint.body.id, eventType: "run.completed" });
    expect(page.data[0].id).toMatch(/^wd_/);
    expect(["pending", "dead"]).toContain(page.data[0].status);
  });
});
