import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createTenant, eventually, inDo } from "./helpers";

const tenantDo = (tenantId: string): any => env.TENANT.get(env.TENANT.idFromName(tenantId));

describe("credentials verified in the Worker", () => {
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
});
