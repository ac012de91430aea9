import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import { api, createTenant } from "./helpers";

describe("the telemetry policy (OpenTelemetry export)", () => {
  it("puts the collector's host on the tenant's egress allowlist and hands agents the opened headers, never echoing them", async () => {
    const { tenantId, key } = await createTenant("otel-policy");
    const stub = tenantStub(env, tenantId);
    expect(await stub.telemetryTarget()).toEqual({ ok: true, target: null });
    const secret = await api("POST", "/v1/providers/secrets", { key, body: { provider: "otlp", apiKey: "Authorization=Bearer%20otlp-token-9Q7,x-team=ops" } });
    expect(secret.status, JSON.stringify(secret.body)).toBe(201);
    const put = await api("PUT", "/v1/policy", { key, body: { telemetry: { otlpEndpoint: "http://127.0.0.1:4318/v1/traces", headersSecretRefId: secret.body.id } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    // A token no random id can contain (ids are lowercase base32): the answer must not echo it.
    expect(JSON.stringify(put.body)).not.toContain("otlp-token-9Q7");
    expect(await stub.egressHosts()).toEqual(["127.0.0.1:4318"]);
    expect(await stub.telemetryTarget()).toEqual({
      ok: true,
      target: { endpoint: "http://127.0.0.1:4318/v1/traces", headers: { authorization: "Bearer otlp-token-9Q7", "x-team": "ops" }, includeBodies: false, policyVersion: put.body.version },
    });
    // A revoked headers secret stops the export rather than send it without them.
    expect((await api("DELETE", `/v1/providers/secrets/${secret.body.id}`, { key })).status).toBe(200);
    expect(await stub.telemetryTarget()).toMatchObject({ ok: false, code: "secret_unavailable" });
  });

  it("refuses an endpoint the mode forbids, a secret stored for another provider, and `otlp` as a provider endpoint id", async () => {
    const { key } = await createTenant("otel-refusals");
    const openaiSecret = await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", apiKey: "sk-" + "x".repeat(40) } });
    const refused = [
      { telemetry: { otlpEndpoint: "http://collector.example.com/v1/traces" } },
      { telemetry: { otlpEndpoint: "https://collector.example.com/v1/traces", headersSecretRefId: openaiSecret.body.id } },
      { telemetry: { otlpEndpoint: "https://collector.example.com/v1/traces", includeBodies: "yes" } },
      { providers: [{ id: "otlp", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", policyVersion: "1", models: ["m"] }] },
    ];
    for (const body of refused) {
      const res = await api("PUT", "/v1/policy", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    }
  });
});
