import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import { api, createTenant } from "./helpers";

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
  it("checks provider → model → category → privacy receipt → secret, in that order", async () => {
    const { key, putPolicy, consent, grant } = await setup("grant-order");
    expect(await grant("openai:gpt-4o-mini")).toMatchObject({ ok: false, code: "provider_not_allowed" });

    const secret = await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", apiKey } });
    const openai = { id: "openai", kind: "openai", policyVersion: "2025-01", models: ["gpt-4o-mini"] };
    await putPolicy({ providers: [openai], categoryModels: { gym: ["openai:gpt-4o"] } });
    expect(await grant("anthropic:claude")).toMatchObject({ code: "provider_not_allowed" });
    expect(await grant("openai:gpt-4o")).toMatchObject({ code: "model_not_allowed" });
    expect(await grant("openai:gpt-4o-mini", ["gym"])).toMatchObject({ code: "model_not_allowed" });
    expect(await grant("openai:gpt-4o-mini", ["work"])).toMatchObject({ code: "privacy_confirmation_required" });

    await consent("openai", "gpt-4o-mini", "2025-01");
    expect(await grant("openai:gpt-4o-mini")).toMatchObject({ code: "secret_unavailable" });

    await putPolicy({ providers: [{ ...openai, secretRefId: secret.body.id }] });
    const granted = await grant("openai:gpt-4o-mini", ["work"]);
    expect(granted).toMatchObject({ ok: true, grant: { model: "gpt-4o-mini", apiKey, endpoint: { id: "openai", kind: "openai", secretRefId: secret.body.id } } });

    // A new provider policy version re-requires consent; the old receipt stays on record.
    await putPolicy({ providers: [{ ...openai, secretRefId: secret.body.id, policyVersion: "2025-06" }] });
    expect(await grant("openai:gpt-4o-mini")).toMatchObject({ code: "privacy_confirmation_required" });
    await consent("openai", "gpt-4o-mini", "2025-06");
    expect(await grant("openai:gpt-4o-mini")).toMatchObject({ ok: true });
    expect((await api("GET", "/v1/providers/consents", { key })).body.data.map((row: Json) => row.policyVersion)).toEqual(["2025-01", "2025-06"]);

    await api("DELETE", `/v1/providers/secrets/${secret.body.id}`, { key });
    expect(await grant("openai:gpt-4o-mini")).toMatchObject({ code: "secret_unavailable" });

    const denials = (await api("GET", "/v1/audit?limit=200", { key })).body.data.filter((entry: Json) => entry.action === "policy.denied");
    expect(denials.map((entry: Json) => entry.detail.code).reverse()).toEqual([
      "provider_not_allowed",
      "provider_not_allowed",
      "model_not_allowed",
      "model_not_allowed",
      "privacy_confirmation_required",
      "secret_unavailable",
      "privacy_confirmation_required",
      "secret_unavailable",
    ]);
    expect(denials[0]).toMatchObject({ actor: "agent:ag_test", target: "openai:gpt-4o-mini", detail: { agentId: "ag_test", modelId: "openai:gpt-4o-mini", code: "secret_unavailable" } });
    expect(JSON.stringify(denials)).not.toContain(apiKey);
  });

  it("lets an openai-compatible endpoint run keyless, and resolves its bare id to the first model", async () => {
    const { putPolicy, consent, grant } = await setup("grant-keyless");
    await putPolicy({ providers: [{ id: "local", kind: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1", policyVersion: "v1", models: ["llama", "qwen"] }] });
    await consent("local", "llama", "v1");
    expect(await grant("openai-compatible:local")).toMatchObject({ ok: true, grant: { model: "llama", apiKey: null, endpoint: { baseUrl: "http://127.0.0.1:11434/v1" } } });
    expect(await grant("openai-compatible:local/qwen")).toMatchObject({ code: "privacy_confirmation_required" });
    expect(await grant("openai:llama")).toMatchObject({ code: "provider_not_allowed" });
  });

  it("answers secret_unavailable for a ciphertext that no longer authenticates", async () => {
    const { key, stub, tenantId, putPolicy, consent, grant } = await setup("grant-tampered");
    const secret = await api("POST", "/v1/providers/secrets", { key, body: { provider: "anthropic", apiKey } });
    await putPolicy({ providers: [{ id: "anthropic", kind: "anthropic", policyVersion: "p1", models: ["claude"], secretRefId: secret.body.id }] });
    await consent("anthropic", "claude", "p1");
    expect(await grant("anthropic:claude")).toMatchObject({ ok: true, grant: { apiKey } });
    await runInDurableObject(env.TENANT.get(env.TENANT.idFromName(tenantId)), async (_instance: TenantDO, state) => {
      const [row] = state.storage.sql.exec<{ ciphertext: string }>("SELECT ciphertext FROM provider_secrets").toArray();
      const flipped = row!.ciphertext.slice(0, -2) + (row!.ciphertext.endsWith("AA") ? "BB" : "AA");
      state.storage.sql.exec("UPDATE provider_secrets SET ciphertext = ?", flipped);
    });
    expect(await grant("anthropic:claude")).toMatchObject({ ok: false, code: "secret_unavailable" });
    expect(await stub.getPolicy()).toMatchObject({ version: 1 });
  });

  it("lists egress hosts of provider endpoints and HTTP tools", async () => {
    const { key, stub, putPolicy } = await setup("grant-egress");
    expect(await stub.egressHosts()).toEqual([]);
    await putPolicy({
      providers: [
        { id: "openai", kind: "openai", policyVersion: "1", models: ["m"] },
        { id: "local", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9009/v1", policyVersion: "1", models: ["m"] },
      ],
    });
    const tool = await api("POST", "/v1/tools", {
      key,
      body: { name: "crm", description: "CRM", inputSchema: { type: "object" }, url: "https://tools.example.com/crm", riskLevel: "low", capability: "taskRead" },
    });
    expect(tool.status, JSON.stringify(tool.body)).toBe(201);
    expect(await stub.egressHosts()).toEqual(["api.openai.com", "127.0.0.1:9009", "tools.example.com"]);
  });

});
