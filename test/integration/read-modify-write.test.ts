import { describe, expect, it } from "vitest";
import { api, createTenant } from "./helpers";

describe("PUT /v1/policy takes back what GET returned (read-modify-write)", () => {
  it("accepts the GET document with a change, ignoring updatedAt and checking version", async () => {
    const { key } = await createTenant();
    const read = await api("GET", "/v1/policy", { key });
    expect(read.body).toMatchObject({ version: 0, updatedAt: null });
    const written = await api("PUT", "/v1/policy", { key, body: { ...read.body, toolQuotas: { create_task: 3 }, updatedAt: "2000-01-01T00:00:00.000Z" } });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(written.body).toMatchObject({ version: 1, toolQuotas: { create_task: 3 } });
    expect(written.body.updatedAt).not.toBe("2000-01-01T00:00:00.000Z");
    const again = await api("PUT", "/v1/policy", { key, body: { ...written.body, toolQuotas: { create_task: 4 } } });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(2);
  });

  it("refuses a write based on a version the policy has moved past with 409 version_conflict, changing nothing", async () => {
    const { key } = await createTenant();
    const read = (await api("GET", "/v1/policy", { key })).body;
    expect((await api("PUT", "/v1/policy", { key, body: { ...read, toolQuotas: { create_task: 1 } } })).status).toBe(200);
    const stale = await api("PUT", "/v1/policy", { key, body: { ...read, toolQuotas: { create_task: 9 } } });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("version_conflict");
    expect((await api("GET", "/v1/policy", { key })).body).toMatchObject({ version: 1, toolQuotas: { create_task: 1 } });
  });

  it("still refuses fields the policy does not have", async () => {
    const { key } = await createTenant();
    const res = await api("PUT", "/v1/policy", { key, body: { toolQuotaz: {} } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
  });
});
