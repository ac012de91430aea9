import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/http/routes";
import { ADMIN, api, createAgent, createTenant } from "./helpers";

const app = buildApp();
const benchEnv = { ...env, VIGIL_BENCH: "enabled" };

/** One call through the real router with the bench switch on (the suite's Worker runs with it off). */
async function bench(path: string, headers: Record<string, string>, switches: object = benchEnv) {
  const response = await app.request(
    `https://vigil.test${path}`,
    { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ op: "storage" }) },
    switches,
  );
  return response.status;
}

describe("the bench routes", () => {
  it("answer only the operator token together with a tenant API key", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "visitor", agents: [agent.id], ttlSeconds: 600 } });
    const path = `/__bench/agents/${agent.id}/op`;
    const operator = { "x-vigil-operator-token": ADMIN };

    expect(await bench(path, { authorization: `Bearer ${minted.body.token}` })).toBe(401);
    expect(await bench(path, { authorization: `Bearer ${minted.body.token}`, ...operator })).toBe(403);
    expect(await bench(path, { authorization: `Bearer ${key}` })).toBe(401);
    expect(await bench(path, { authorization: `Bearer ${key}`, "x-vigil-operator-token": `${ADMIN}x` })).toBe(401);
    expect(await bench(path, { authorization: `Bearer ${ADMIN}` })).toBe(401);
    // Past the route's gate the call reaches the object, whose own bench switch is off in this suite: its 404.
    expect(await bench(path, { authorization: `Bearer ${key}`, ...operator })).toBe(404);
    expect(await bench("/__bench/tenant/alertness", { authorization: `Bearer ${key}` })).toBe(401);
    expect(await bench("/__bench/tenant/alertness", { authorization: `Bearer ${key}`, ...operator })).toBe(404);
  });

  it("do not exist without the bench switch (absent, not refused)", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    expect(await bench(`/__bench/agents/${agent.id}/op`, { authorization: `Bearer ${key}` }, env)).toBe(404);
    expect(await bench("/__bench/tenant/alertness", { authorization: `Bearer ${key}` }, env)).toBe(404);
  });
});
