import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { credentialTtlMs } from "../../src/http/credential-cache";
import { api, createTenant } from "./helpers";

const tenantDo = (tenantId: string): any => env.TENANT.get(env.TENANT.idFromName(tenantId));

describe("credentials verified in the Worker", () => {
  it("a cached API key costs no TenantDO call", async () => {
    const { key, tenantId } = await createTenant();
    const cachedSince = Date.now();
    expect((await api("GET", "/v1/agents", { key })).status).toBe(200);
    const before = (await tenantDo(tenantId).keyLookups()) as number;
    for (let i = 0; i < 10; i++) expect((await api("GET", "/v1/agents", { key })).status).toBe(200);
    // The pool's cache TTL is short (2 s), and a loaded machine can stretch the loop over several TTLs: the entry may be
    // refreshed once per TTL that lapsed, never once per request.
    const lapses = Math.ceil((Date.now() - cachedSince) / credentialTtlMs(env));
    expect((await tenantDo(tenantId).keyLookups()) - before).toBeLessThanOrEqual(lapses);
  });

  it("per-client request budgets come from the Rate Limiting binding, per key", async () => {
    const { key } = await createTenant();
    const made = await api("POST", "/v1/keys", { key, body: { name: "busy" } });
    let status = 200;
    let sent = 0;
    // The binding counts in fixed 60 s periods: a burst that straddles one edge needs up to 2 × 100 + 1 requests.
    while (status !== 429 && sent <= 200) {
      status = (await api("GET", "/v1/agents", { key: made.body.key })).status;
      sent += 1;
    }
    expect(status).toBe(429);
    expect(sent).toBeGreaterThan(100);
    // Another key of the tenant still has its own budget.
    expect((await api("GET", "/v1/agents", { key })).status).toBe(200);
  });
});
