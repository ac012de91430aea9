import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { credentialTtlMs } from "../../src/http/credential-cache";
import { api, createTenant, eventually, inDo } from "./helpers";

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

  it("a key revoked through this Worker stops at once; one revoked elsewhere stops within the cache TTL", async () => {
    const { key, tenantId } = await createTenant();
    const made = await api("POST", "/v1/keys", { key, body: { name: "short-lived" } });
    expect(made.status).toBe(201);
    const other = made.body.key as string;
    expect((await api("GET", "/v1/agents", { key: other })).status).toBe(200);
    expect((await api("DELETE", `/v1/keys/${made.body.id}`, { key })).status).toBe(200);
    expect((await api("GET", "/v1/agents", { key: other })).status).toBe(401);

    // Revoked in the tenant's object without passing through this isolate (as another isolate would): the cached
    // grant lapses within the TTL and the next lookup refuses it.
    const third = await api("POST", "/v1/keys", { key, body: { name: "revoked elsewhere" } });
    expect((await api("GET", "/v1/agents", { key: third.body.key })).status).toBe(200);
    await inDo(tenantDo(tenantId), (_i, state) => state.storage.sql.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", new Date().toISOString(), third.body.id));
    await eventually(async () => (await api("GET", "/v1/agents", { key: third.body.key })).status === 401);
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
