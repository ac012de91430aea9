import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/http/routes";
import { ADMIN, api, createTenant } from "./helpers";

type Json = Record<string, any>;

const openaiEndpoint = (overrides: Json = {}) => ({ id: "openai", kind: "openai", policyVersion: "2025-01", models: ["gpt-4o-mini"], ...overrides });

async function audit(key: string): Promise<Json[]> {
  const res = await api("GET", "/v1/audit?limit=200", { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("PUT|GET /v1/policy", () => {
  it("starts at the empty version 0, appends a version per change and audits it", async () => {
    const { key } = await createTenant("policy");
    const initial = await api("GET", "/v1/policy", { key });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ version: 0, updatedAt: null, providers: [], categoryModels: {}, budgets: {}, toolQuotas: {}, toolRateLimits: {}, decisionTimeouts: {}, trust: { profile: "balanced", overrides: {} }, retention: {}, extensionSlots: {}, sessions: {}, visitorApprovableTools: [] });

    const put = await api("PUT", "/v1/policy", { key, body: { providers: [openaiEndpoint({ id: "local", kind: "openai-compatible", baseUrl: "https://llm.example.com/v1" })], toolQuotas: { create_task: 5 } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ version: 1, toolQuotas: { create_task: 5 }, providers: [{ id: "local", timeoutMs: 30_000, pricing: {} }] });
    expect(put.body.updatedAt).toEqual(expect.any(String));

    const same = await api("PUT", "/v1/policy", { key, body: { providers: put.body.providers, toolQuotas: { create_task: 5 } } });
    expect(same.body.version).toBe(1);
    const changed = await api("PUT", "/v1/policy", { key, body: { toolQuotas: { create_task: 6 } } });
    expect(changed.body).toMatchObject({ version: 2, providers: [], toolQuotas: { create_task: 6 } });
    expect((await api("GET", "/v1/policy", { key })).body).toEqual(changed.body);

    const entries = (await audit(key)).filter((entry) => entry.action === "policy.updated");
    expect(entries.map((entry) => entry.detail.version)).toEqual([2, 1]);
    expect(entries[1]).toMatchObject({ target: "policy:1", detail: { providers: [{ id: "local", kind: "openai-compatible", policyVersion: "2025-01" }] } });
  });

  it("refuses invalid bodies with field paths and changes nothing", async () => {
    const { key } = await createTenant("policy-bad");
    const cases: Array<[unknown, string]> = [
      [{ providers: [openaiEndpoint({ kind: "bogus" })] }, "providers.0.kind"],
      [{ providers: [openaiEndpoint({ models: [] })] }, "providers.0.models"],
      [{ providers: [openaiEndpoint({ id: "gpt" })] }, "providers.0.id"],
      [{ providers: [openaiEndpoint({ id: "local", kind: "openai-compatible" })] }, "providers.0.baseUrl"],
      [{ providers: [openaiEndpoint({ id: "local", kind: "openai-compatible", baseUrl: "http://llm.example.com" })] }, "providers.0.baseUrl"],
      [{ providers: [openaiEndpoint({ secretRefId: "ps_missing" })] }, "providers.0.secretRefId"],
      [{ providers: [openaiEndpoint(), openaiEndpoint()] }, "providers.1.id"],
      [{ categoryModels: { gym: ["gpt-4o"] } }, "categoryModels.gym.0"],
      [{ toolQuotas: { create_task: -1 } }, "toolQuotas.create_task"],
      [{ surprise: true }, "(root)"],
    ];
    for (const [body, path] of cases) {
      const res = await api("PUT", "/v1/policy", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors.map((error: Json) => error.path), JSON.stringify(res.body)).toContain(path);
    }
    expect((await api("PUT", "/v1/policy", { key, body: "{not json" })).status).toBe(400);
    expect((await api("GET", "/v1/policy", { key })).body.version).toBe(0);
  });

  it("honours If-Match, needs an admin API key and is per tenant", async () => {
    const { key } = await createTenant("policy-match");
    const other = await createTenant("policy-other");
    expect((await api("PUT", "/v1/policy", { key, body: { toolQuotas: { a: 1 } }, headers: { "if-match": "0" } })).body.version).toBe(1);
    const stale = await api("PUT", "/v1/policy", { key, body: { toolQuotas: { a: 2 } }, headers: { "if-match": "0" } });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("version_conflict");
    const reader = await api("POST", "/v1/keys", { key, body: { scopes: ["agents:read", "agents:write"] } });
    expect((await api("PUT", "/v1/policy", { key: reader.body.key, body: {} })).status).toBe(403);
    expect((await api("GET", "/v1/policy", { key: reader.body.key })).status).toBe(403);
    expect((await api("GET", "/v1/policy")).status).toBe(401);
    expect((await api("GET", "/v1/policy", { key: other.key })).body.version).toBe(0);
  });
});

describe("/v1/providers/secrets", () => {
  const apiKey = "sk-test-" + "q".repeat(40);

  it("stores a key write-only: metadata in answers and lists, never the key; audited on create and revoke", async () => {
    const { key } = await createTenant("secrets");
    const created = await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", name: "prod", apiKey } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^ps_/), provider: "openai", name: "prod", createdAt: expect.any(String), revokedAt: null });
    const list = await api("GET", "/v1/providers/secrets", { key });
    expect(list.body).toEqual({ data: [created.body], nextCursor: null });

    const revoked = await api("DELETE", `/v1/providers/secrets/${created.body.id}`, { key });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await api("DELETE", `/v1/providers/secrets/${created.body.id}`, { key })).status).toBe(404);
    expect((await api("GET", "/v1/providers/secrets", { key })).body.data[0].revokedAt).toEqual(revoked.body.revokedAt);

    const entries = await audit(key);
    expect(entries.filter((entry) => entry.action.startsWith("provider_secret.")).map((entry) => [entry.action, entry.target])).toEqual([
      ["provider_secret.revoked", created.body.id],
      ["provider_secret.created", created.body.id],
    ]);
    for (const text of [JSON.stringify(created.body), JSON.stringify(list.body), JSON.stringify(revoked.body), JSON.stringify(entries)]) expect(text).not.toContain(apiKey);
  });

  it("replays an Idempotency-Key for the same body and refuses another body under it", async () => {
    const { key } = await createTenant("secrets-idem");
    const headers = { "idempotency-key": "secret-1" };
    const first = await api("POST", "/v1/providers/secrets", { key, headers, body: { provider: "openai", apiKey } });
    const again = await api("POST", "/v1/providers/secrets", { key, headers, body: { provider: "openai", apiKey } });
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const otherKey = await api("POST", "/v1/providers/secrets", { key, headers, body: { provider: "openai", apiKey: apiKey + "x" } });
    expect(otherKey.status).toBe(409);
    expect(otherKey.body.code).toBe("idempotency_conflict");
    expect((await api("GET", "/v1/providers/secrets", { key })).body.data).toHaveLength(1);
    expect((await audit(key)).filter((entry) => entry.action === "provider_secret.created")).toHaveLength(1);
  });

  it("validates bodies, needs admin, and hides other tenants' secrets", async () => {
    const { key } = await createTenant("secrets-bad");
    const other = await createTenant("secrets-other");
    for (const body of [{ provider: "openai" }, { provider: "Open AI", apiKey }, { provider: "openai", apiKey: "" }, { provider: "openai", apiKey: "x".repeat(5000) }, { provider: "openai", apiKey, extra: 1 }]) {
      const res = await api("POST", "/v1/providers/secrets", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(JSON.stringify(res.body)).not.toContain(apiKey);
    }
    const reader = await api("POST", "/v1/keys", { key, body: { scopes: ["agents:read", "agents:write"] } });
    expect((await api("POST", "/v1/providers/secrets", { key: reader.body.key, body: { provider: "openai", apiKey } })).status).toBe(403);
    const mine = await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", apiKey } });
    expect((await api("DELETE", `/v1/providers/secrets/${mine.body.id}`, { key: other.key })).status).toBe(404);
    expect((await api("GET", "/v1/providers/secrets", { key: other.key })).body.data).toEqual([]);
    expect((await api("GET", "/v1/providers/secrets?cursor=nope", { key })).status).toBe(400);
  });
});

describe("/v1/providers/consents", () => {
  it("records a receipt only for the endpoint's current terms, idempotently, and audits it once", async () => {
    const { key } = await createTenant("consents");
    const consent = { provider: "local", model: "llama", policyVersion: "v1" };
    expect((await api("POST", "/v1/providers/consents", { key, body: consent })).body.errors[0].path).toBe("provider");
    await api("PUT", "/v1/policy", { key, body: { providers: [{ id: "local", kind: "openai-compatible", baseUrl: "https://llm.example.com", policyVersion: "v2", models: ["llama"] }] } });
    const wrongVersion = await api("POST", "/v1/providers/consents", { key, body: consent });
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.body).toMatchObject({ code: "validation_failed", errors: [{ path: "policyVersion" }] });
    expect(wrongVersion.body.detail).toContain("'v2'");
    expect((await api("POST", "/v1/providers/consents", { key, body: { ...consent, model: "qwen", policyVersion: "v2" } })).body.errors[0].path).toBe("model");

    const created = await api("POST", "/v1/providers/consents", { key, body: { ...consent, policyVersion: "v2" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^pc_/), provider: "local", model: "llama", policyVersion: "v2", consentedBy: expect.stringMatching(/^key:/), createdAt: expect.any(String) });
    const repeat = await api("POST", "/v1/providers/consents", { key, body: { ...consent, policyVersion: "v2" } });
    expect(repeat.status).toBe(201);
    expect(repeat.body).toEqual(created.body);
    expect((await api("GET", "/v1/providers/consents", { key })).body).toEqual({ data: [created.body], nextCursor: null });
    expect((await audit(key)).filter((entry) => entry.action === "provider_consent.recorded")).toMatchObject([{ target: created.body.id, detail: { provider: "local", model: "llama", policyVersion: "v2" } }]);
  });
});

describe("/__debug dump seam", () => {
  it("does not exist without VIGIL_FAULTS=enabled", async () => {
    const { tenantId } = await createTenant("dump-off");
    const production = { ...env, VIGIL_FAULTS: undefined };
    const res = await buildApp().request(`/__debug/tenants/${tenantId}/dump`, { headers: { authorization: `Bearer ${ADMIN}` } }, production);
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).code).toBe("not_found");
  });
});
