import type { DeploymentMode } from "../../src/core/egress/deployment-mode";
import { describe, expect, it } from "vitest";
import { canonicalModelId, checkPolicy, endpointHosts, gateInference } from "../../src/core/governance/policy-rules";
import { PolicyBody, type ProviderEndpoint } from "../../src/schema/admin/policy";

const endpoint = (overrides: Partial<ProviderEndpoint> & Pick<ProviderEndpoint, "id" | "kind">): ProviderEndpoint => ({
  policyVersion: "2025-01",
  models: ["m1", "m2"],
  pricing: {},
  timeoutMs: 30_000,
  ...overrides,
});

const body = (input: Record<string, unknown>) => PolicyBody.parse(input);
const context = (secrets: Record<string, string> = {}, mode: DeploymentMode = "deployed") => ({ secretProviders: new Map(Object.entries(secrets)), mode });

describe("checkPolicy", () => {
  it("accepts vendor endpoints by their own id and named openai-compatible endpoints", () => {
    const policy = body({
      providers: [endpoint({ id: "openai", kind: "openai", secretRefId: "ps_1" }), endpoint({ id: "local", kind: "openai-compatible", baseUrl: "https://llm.example.com/v1" })],
      categoryModels: { gym: ["openai:m1", "openai-compatible:local/m2", "openai-compatible:local"] },
    });
    expect(checkPolicy(policy, context({ ps_1: "openai" }))).toEqual([]);
  });

  it("refuses ids that a model id of the endpoint's kind could not reach", () => {
    const issues = checkPolicy(
      body({ providers: [endpoint({ id: "openai-eu", kind: "openai" }), endpoint({ id: "anthropic", kind: "openai-compatible", baseUrl: "https://x.example.com" })] }),
      context(),
    );
    expect(issues.map((issue) => issue.path)).toEqual(["providers.0.id", "providers.1.id"]);
  });

  it("refuses duplicates, missing base URLs, plain http and stray pricing", () => {
    const issues = checkPolicy(
      body({
        providers: [
          endpoint({ id: "local", kind: "openai-compatible", models: ["a", "a"], pricing: { b: { inputUsdPerMTok: 1, outputUsdPerMTok: 1 } } }),
          endpoint({ id: "local", kind: "openai-compatible", baseUrl: "http://llm.example.com" }),
          endpoint({ id: "workers-ai", kind: "workers-ai" }),
        ],
      }),
      context(),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual(["providers.0.baseUrl", "providers.0.models", "providers.0.pricing.b", "providers.1.baseUrl", "providers.1.id", "providers.2.baseUrl"].sort());
  });

  it("allows a loopback or private http endpoint (Ollama, vLLM) in local mode only, and names the mode when it refuses", () => {
    for (const baseUrl of ["http://127.0.0.1:11434/v1", "http://localhost:11434/v1", "http://192.168.1.20:8000/v1", "http://ollama:11434/v1"]) {
      const policy = body({ providers: [endpoint({ id: "local", kind: "openai-compatible", baseUrl })] });
      expect(checkPolicy(policy, context({}, "local"))).toEqual([]);
      const refused = checkPolicy(policy, context({}, "deployed"));
      expect(refused.map((issue) => issue.path)).toEqual(["providers.0.baseUrl"]);
      expect(refused[0]!.message).toMatch(/deployed mode/);
    }
  });

  it("checks an identity provider's JWKS URL with the same egress rule as endpoints", () => {
    const idp = (jwksUrl: string) => body({ identityProvider: { jwksUrl, issuer: "https://idp.example.com/", audience: "a", algorithms: ["RS256"], agentIds: [], scopes: ["agents:read"] } });
    expect(checkPolicy(idp("https://idp.example.com/.well-known/jwks.json"), context())).toEqual([]);
    expect(checkPolicy(idp("http://127.0.0.1:9000/jwks.json"), context({}, "local"))).toEqual([]);
    expect(checkPolicy(idp("http://127.0.0.1:9000/jwks.json"), context())).toEqual([{ path: "identityProvider.jwksUrl", message: expect.stringMatching(/deployed mode/) }]);
  });

  it("binds a secret to the endpoint it was stored for", () => {
    const policy = body({ providers: [endpoint({ id: "openai", kind: "openai", secretRefId: "ps_a" })] });
    expect(checkPolicy(policy, context())[0]).toMatchObject({ path: "providers.0.secretRefId", message: expect.stringContaining("no live provider secret") });
    expect(checkPolicy(policy, context({ ps_a: "anthropic" }))[0]).toMatchObject({ path: "providers.0.secretRefId", message: expect.stringContaining("'anthropic'") });
  });

  it("refuses category entries that are not model ids", () => {
    expect(checkPolicy(body({ categoryModels: { gym: ["gpt-4o"] } }), context()).map((issue) => issue.path)).toEqual(["categoryModels.gym.0"]);
  });
});

describe("gateInference", () => {
  const policy = {
    providers: [endpoint({ id: "openai", kind: "openai" }), endpoint({ id: "local", kind: "openai-compatible", baseUrl: "https://llm.example.com", models: ["llama", "qwen"] })],
    categoryModels: { gym: ["openai:m1", "openai-compatible:local"], work: [] as string[] },
  };
  const all = () => true;

  it("resolves vendor and openai-compatible ids, the bare endpoint meaning its first model", () => {
    expect(gateInference(policy, { modelId: "openai:m2", categoryIds: [] }, all)).toMatchObject({ ok: true, endpoint: { id: "openai" }, model: "m2" });
    expect(gateInference(policy, { modelId: "openai-compatible:local", categoryIds: [] }, all)).toMatchObject({ ok: true, endpoint: { id: "local" }, model: "llama" });
    expect(gateInference(policy, { modelId: "openai-compatible:local/qwen", categoryIds: [] }, all)).toMatchObject({ ok: true, model: "qwen" });
  });

  it("answers provider_not_allowed for unknown endpoints, kind mismatches, builtin and garbage", () => {
    for (const modelId of ["anthropic:claude", "openai-compatible:openai/m1", "openai-compatible:other/x", "builtin:echo", "nonsense"]) {
      expect(gateInference(policy, { modelId, categoryIds: [] }, all)).toMatchObject({ ok: false, code: "provider_not_allowed" });
    }
  });

  it("answers model_not_allowed for an unlisted model or a category that does not list it", () => {
    expect(gateInference(policy, { modelId: "openai:m3", categoryIds: [] }, all)).toMatchObject({ code: "model_not_allowed" });
    expect(gateInference(policy, { modelId: "openai:m2", categoryIds: ["gym"] }, all)).toMatchObject({ code: "model_not_allowed" });
    expect(gateInference(policy, { modelId: "openai:m1", categoryIds: ["gym", "work"] }, all)).toMatchObject({ code: "model_not_allowed" });
    expect(gateInference(policy, { modelId: "openai:m1", categoryIds: ["gym", "unrestricted"] }, all)).toMatchObject({ ok: true });
    expect(gateInference(policy, { modelId: "openai-compatible:local/llama", categoryIds: ["gym"] }, all)).toMatchObject({ ok: true });
    expect(gateInference(policy, { modelId: "openai-compatible:local/qwen", categoryIds: ["gym"] }, all)).toMatchObject({ code: "model_not_allowed" });
  });

  it("checks the privacy receipt last, for the endpoint's current policyVersion", () => {
    const asked: string[] = [];
    const none = (provider: string, model: string, version: string) => {
      asked.push(`${provider}|${model}|${version}`);
      return false;
    };
    expect(gateInference(policy, { modelId: "openai:m3", categoryIds: [] }, none)).toMatchObject({ code: "model_not_allowed" });
    expect(asked).toEqual([]);
    expect(gateInference(policy, { modelId: "openai:m1", categoryIds: [] }, none)).toMatchObject({ code: "privacy_confirmation_required" });
    expect(asked).toEqual(["openai|m1|2025-01"]);
  });

  it("spells canonical ids and endpoint hosts", () => {
    expect(canonicalModelId({ id: "local", kind: "openai-compatible" }, "x")).toBe("openai-compatible:local/x");
    expect(canonicalModelId({ id: "openai", kind: "openai" }, "x")).toBe("openai:x");
    expect(endpointHosts([...policy.providers, endpoint({ id: "anthropic", kind: "anthropic" }), endpoint({ id: "l2", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9000/v1" })])).toEqual([
      "api.openai.com",
      "llm.example.com",
      "api.anthropic.com",
      "127.0.0.1:9000",
    ]);
  });
});
