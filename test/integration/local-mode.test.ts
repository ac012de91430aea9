import { describe, expect, it } from "vitest";
import { api, createTenant } from "./helpers";

/** The integration pool runs with VIGIL_MODE=local, as `npm start` does; deployed-mode refusals are in test/unit/egress.test.ts. */
describe("local mode (npm start): local models and receivers", () => {
  it("accepts an openai-compatible provider at http://localhost:11434/v1 (Ollama) and on a private address", async () => {
    const { key } = await createTenant();
    const policy = await api("PUT", "/v1/policy", {
      key,
      body: {
        providers: [
          { id: "ollama", kind: "openai-compatible", baseUrl: "http://localhost:11434/v1", policyVersion: "local", models: ["llama3.2"] },
          { id: "vllm", kind: "openai-compatible", baseUrl: "http://192.168.1.40:8000/v1", policyVersion: "local", models: ["qwen"] },
        ],
      },
    });
    expect(policy.status).toBe(200);
    expect(policy.body.providers.map((p: { baseUrl: string }) => p.baseUrl)).toEqual(["http://localhost:11434/v1", "http://192.168.1.40:8000/v1"]);
  });

  it("accepts HTTP tools and outbound webhooks on loopback and private http receivers", async () => {
    const { key } = await createTenant();
    const tool = await api("POST", "/v1/tools", {
      key,
      body: { name: "lookup", description: "d", inputSchema: { type: "object" }, url: "http://10.0.0.7:3000/lookup", riskLevel: "low", capability: "taskRead" },
    });
    expect(tool.status).toBe(201);
    const hook = await api("POST", "/v1/webhooks", { key, body: { url: "http://127.0.0.1:4000/vigil", eventTypes: ["run.*"] } });
    expect(hook.status).toBe(201);
  });

  it("still refuses plain http to a public host, naming the mode", async () => {
    const { key } = await createTenant();
    const policy = await api("PUT", "/v1/policy", {
      key,
      body: { providers: [{ id: "remote", kind: "openai-compatible", baseUrl: "http://llm.example.com/v1", policyVersion: "1", models: ["m"] }] },
    });
    expect(policy.status).toBe(400);
    expect(policy.body.code).toBe("validation_failed");
    expect(policy.body.detail).toMatch(/local mode/);
    const hook = await api("POST", "/v1/webhooks", { key, body: { url: "http://hooks.example.com/vigil", eventTypes: ["run.*"] } });
    expect(hook.status).toBe(400);
    expect(hook.body.detail).toMatch(/local mode/);
  });
});
