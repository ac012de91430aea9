import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import { ADMIN, api, createTenant } from "./helpers";

type Json = Record<string, any>;

const apiKey = "sk-grant-" + "z".repeat(40);

async function setup(name: string) {
  const { tenantId, key } = await createTenant(name);
  const stub = tenantStub(env, tenantId);
  const putPolicy = async (body: Json) => {
    const res = await api("PUT", "/v1/policy", { key, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const consent = async (provider: string, model: string, policyVersion: string) => {
    const res = await api("POST", "/v1/providers/consents", { key, body: { provider, model, policyVersion } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  const grant = (modelId: string, categoryIds: string[] = []) => stub.inferenceGrant({ agentId: "ag_test", modelId, categoryIds });
  return { tenantId, key, stub, putPolicy, consent, grant };
}

describe("TenantDO.inferenceGrant", () => {
  it("keeps the key out of every tenant table (ciphertext only)", async () => {
    const { key, tenantId } = await setup("grant-dump");
    await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", apiKey }, headers: { "idempotency-key": "k1" } });
    const dump = await api("GET", `/__debug/tenants/${tenantId}/dump`, { key: ADMIN });
    expect(dump.status).toBe(200);
    expect(dump.body.tables.provider_secrets).toEqual([expect.objectContaining({ provider: "openai", ciphertext: expect.stringMatching(/^v2\.[0-9a-f]{8}\./) })]);
    expect(JSON.stringify(dump.body)).not.toContain(apiKey);
    expect(JSON.stringify(dump.body)).not.toContain([...new TextEncoder().encode(apiKey)].map((byte) => byte.toString(16).padStart(2, "0")).join(""));
  });
});
