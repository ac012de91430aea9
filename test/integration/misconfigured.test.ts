import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/worker";
import { api, createAgent, createTenant } from "./helpers";

/** The same Worker with another VIGIL_MASTER_KEY, as a deployment without the secret would run it. */
async function call(masterKey: string | undefined, path: string, init: RequestInit = {}) {
  const broken = { ...env, VIGIL_MASTER_KEY: masterKey } as typeof env;
  const response = await worker.fetch!(new Request(`https://vigil.test${path}`, init) as never, broken as never, createExecutionContext());
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as Record<string, unknown> };
}

describe("a missing or short VIGIL_MASTER_KEY fails closed", () => {
  it("answers 503 server_misconfigured as problem+json on every API route, never deriving a key", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "visitor", agents: [agent.id], scope: ["agents:read"] } });
    expect(minted.status).toBe(201);
    for (const masterKey of [undefined, "", "too-short-a-master-key"]) {
      for (const [path, token] of [
        ["/v1/agents", key],
        ["/v1/agents", minted.body.token as string],
        ["/v1/tenants", "test-admin-token"],
      ] as const) {
        const answer = await call(masterKey, path, { headers: { authorization: `Bearer ${token}` } });
        expect(answer.status, `${path} with key ${JSON.stringify(masterKey)}`).toBe(503);
        expect(answer.type).toBe("application/problem+json");
        expect(answer.body).toMatchObject({ status: 503, code: "server_misconfigured" });
        expect(String(answer.body.detail)).not.toContain(tenantId);
      }
    }
    // The widget JWT path derives its key from the master key; with the real key it still works.
    expect((await api("GET", `/v1/agents/${agent.id}`, { key: minted.body.token })).status).toBe(200);
  });
});
