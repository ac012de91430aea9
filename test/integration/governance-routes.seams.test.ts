import { describe, expect, it } from "vitest";
import { ADMIN, api, createTenant } from "./helpers";

type Json = Record<string, any>;

async function audit(key: string): Promise<Json[]> {
  const res = await api("GET", "/v1/audit?limit=200", { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("/__debug dump seam", () => {
  it("answers the operator only and dumps every table of the tenant", async () => {
    const { tenantId, key } = await createTenant("dump");
    expect((await api("GET", `/__debug/tenants/${tenantId}/dump`, { key })).status).toBe(401);
    const dump = await api("GET", `/__debug/tenants/${tenantId}/dump`, { key: ADMIN });
    expect(dump.status).toBe(200);
    expect(Object.keys(dump.body.tables)).toEqual(expect.arrayContaining(["tenant", "api_keys", "audit", "policy", "provider_secrets", "provider_consents"]));
    expect(dump.body.tables.tenant).toEqual([expect.objectContaining({ id: tenantId })]);
    expect((await api("GET", `/__debug/tenants/bad%20id/dump`, { key: ADMIN })).status).toBe(400);
  });
});
