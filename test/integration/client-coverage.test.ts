import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPERATIONS, VigilApiError, VigilClient } from "../../src/client";
import { api, createAgent, createTenant } from "./helpers";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function clientFor(key: string): VigilClient {
  return new VigilClient({ baseUrl: "https://vigil.test", token: key, fetch: (input, init) => SELF.fetch(input as string, init) });
}

describe("the typed client covers the API", () => {
  it("has a client method for every operation in the live /v1/openapi.json (npm run gen:client if not)", async () => {
    const { body } = await api("GET", "/v1/openapi.json");
    const byRoute = new Map(Object.entries(OPERATIONS).map(([name, op]) => [`${op.method} ${op.path}`, name]));
    const live: string[] = [];
    const missing: string[] = [];
    for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, { operationId?: string }>>)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const route = `${method.toUpperCase()} ${path}`;
        live.push(route);
        const name = byRoute.get(route);
        // The method must exist on the client and carry the operation's own name when it has one.
        if (!name || typeof (VigilClient.prototype as unknown as Record<string, unknown>)[name] !== "function" || (op.operationId !== undefined && op.operationId !== name)) missing.push(`${route} (${op.operationId ?? "no operationId"})`);
      }
    }
    expect(live.length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
    // …and no method for an operation that is gone.
    expect([...byRoute.keys()].filter((route) => !live.includes(route))).toEqual([]);
  });

  it("never gives two operations one operationId", async () => {
    const { body } = await api("GET", "/v1/openapi.json");
    // A route without an operationId is allowed (the generator derives its method name from the path).
    const ids = Object.values(body.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) => METHODS.flatMap((method) => (item[method]?.operationId ? [item[method]!.operationId!] : [])));
    expect(ids.length).toBeGreaterThan(100);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it("calls generated operations end to end: journal, subscriptions, policy, audit, metrics, and problems as VigilApiError", async () => {
    const { key } = await createTenant("client-ops");
    const vigil = clientFor(key);
    const agent = await createAgent(key);

    const category = await vigil.createJournalCategory({ name: "Gym" });
    expect(category).toMatchObject({ name: "Gym", version: 1 });
    const page = await vigil.listJournalCategories({ limit: 10 });
    expect(page.data.map((c) => c.id)).toContain(category.id);
    const renamed = await vigil.updateJournalCategory(category.id, { name: "Gym & run", version: category.version });
    expect(renamed.name).toBe("Gym & run");

    const subscription = await vigil.createSubscription(agent.id, { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }] });
    expect((await vigil.listSubscriptions(agent.id)).data.map((s) => s.id)).toEqual([subscription.id]);
    await vigil.deleteSubscription(agent.id, subscription.id);

    const policy = await vigil.getPolicy();
    expect(typeof policy.version).toBe("number");
    expect(Array.isArray((await vigil.listAudit({ limit: 5 })).data)).toBe(true);

    const metrics = await vigil.getMetrics();
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    expect(await metrics.text()).toContain("# TYPE ");

    // A stale version is the server's problem document, surfaced with its stable code.
    const stale = await vigil.deleteJournalCategory(category.id, { version: category.version }).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(VigilApiError);
    expect((stale as VigilApiError).status).toBe(409);

    // Another tenant's agent does not exist for this key.
    const other = await createTenant("client-ops-other");
    const foreign = await clientFor(other.key).getAgent(agent.id).catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(VigilApiError);
    expect((foreign as VigilApiError).status).toBe(404);
  });
});
