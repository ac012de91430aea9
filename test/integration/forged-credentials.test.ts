import { SELF } from "cloudflare:test";
import { generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { randomId, randomSecret } from "../../src/ids";
import { TENANT_REGISTRY_OBJECT } from "../../src/objects/tenant/access";
import { ADMIN, api, createAgent, createTenant } from "./helpers";

/** The isolate's Durable Object call tally (src/objects/shared/call-meter.ts): every stub call, by tenant id. */
const tally = () => (globalThis as unknown as Record<symbol, Map<string, Map<string, number>> | undefined>)[Symbol.for("vigil.do-call-meter")] ?? new Map();
const calledTenants = () => new Set(tally().keys());
/** Calls of `method` on a tenant's object counted so far in this isolate. */
const tenantCalls = (tenantId: string, method: string) => tally().get(tenantId)?.get(`tenant\u0000${method}`) ?? 0;

const post = (path: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`https://vigil.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
const get = (path: string, bearer: string) => SELF.fetch(`https://vigil.test${path}`, { headers: { authorization: `Bearer ${bearer}` } });

describe("forged credentials", () => {
  it("5 000 never-issued keys, tokens, trigger URLs and source paths call no tenant's object, and a real tenant is served meanwhile", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const rsa = await generateKeyPair("RS256");
    const hs = crypto.getRandomValues(new Uint8Array(32));
    const forgedIds: string[] = [];
    const forge = async (i: number): Promise<Response> => {
      const tid = randomId("t", 16);
      forgedIds.push(tid);
      const claims = { tid, agents: ["ag_x"], scope: "agents:read" };
      const exp = Math.floor(Date.now() / 1000) + 600;
      switch (i % 5) {
        case 0:
          return get("/v1/agents", `vk_${tid}_${randomSecret()}`);
        case 1:
          return get("/v1/agents", await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setSubject("v").setExpirationTime(exp).sign(hs));
        case 2:
          return get("/v1/agents", await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k" }).setSubject("v").setExpirationTime(exp).sign(rsa.privateKey));
        case 3:
          return post(`/v1/hooks/t/trg_${tid}_${randomId("", 20)}?token=${randomSecret()}`);
        default:
          return post(`/v1/hooks/s/ws_${tid}_${randomId("", 20)}`, { "x-vigil-signature": "sha256=00" });
      }
    };
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => forge(batch * 50 + i)));
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      await Promise.all(answers.map((answer) => answer.body?.cancel()));
      if (batch % 10 === 0) expect((await api("GET", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    }
    expect(forgedIds).toHaveLength(5_000);
    expect(Object.fromEntries(statuses)).toEqual({ 401: 5_000 });
    const called = calledTenants();
    expect(forgedIds.filter((id) => called.has(id))).toEqual([]);
    expect(called.has(TENANT_REGISTRY_OBJECT)).toBe(true);
    expect((await api("GET", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
  }, 180_000);

  it("a refused key is answered from the negative cache: repeating it asks no object again", async () => {
    const { tenantId } = await createTenant();
    const forged = `vk_${tenantId}_${randomSecret()}`;
    const before = tenantCalls(tenantId, "authenticate");
    expect((await get("/v1/agents", forged)).status).toBe(401);
    for (let i = 0; i < 20; i++) expect((await get("/v1/agents", forged)).status).toBe(401);
    expect(tenantCalls(tenantId, "authenticate") - before).toBe(1);
  });

  it("GET /v1/tenants lists the registry's tenants (operator only), created and erased ones included or gone", async () => {
    const a = await createTenant("listed-a");
    const b = await createTenant("listed-b");
    expect((await api("GET", "/v1/tenants", { key: a.key })).status).toBe(401);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const listed: { status: number; body: any } = await api("GET", `/v1/tenants?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: ADMIN });
      expect(listed.status).toBe(200);
      ids.push(...listed.body.data.map((tenant: { id: string }) => tenant.id));
      cursor = listed.body.nextCursor;
    } while (cursor);
    expect(ids).toEqual(expect.arrayContaining([a.tenantId, b.tenantId]));
    expect([...ids].sort()).toEqual(ids);
    expect((await api("DELETE", `/v1/tenants/${a.tenantId}`, { key: ADMIN })).status).toBe(200);
    const after = await api("GET", "/v1/tenants?limit=100", { key: ADMIN });
    expect(after.body.data.map((tenant: { id: string }) => tenant.id)).not.toContain(a.tenantId);
    expect((await get("/v1/agents", a.key)).status).toBe(401);
    expect((await get("/v1/agents", b.key)).status).toBe(200);
  });
});
