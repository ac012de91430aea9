import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

describe("GET /docs", () => {
  it("is a public, self-contained HTML page driven by openapi.json", async () => {
    const res = await api("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.body).toContain("openapi.json");
    expect(res.body).not.toMatch(/https?:\/\//);
    expect(res.body).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i);
  });
});

describe("GET /v1/audit", () => {
  it("lists the tenant's audit entries newest first with cursor pagination", async () => {
    const { key } = await createTenant();
    const created = await api("POST", "/v1/keys", { key, body: { name: "ci", scopes: ["agents:read"] } });
    expect(created.status).toBe(201);
    expect((await api("DELETE", `/v1/keys/${created.body.id}`, { key })).status).toBe(200);
    const agent = await createAgent(key);
    expect((await api("POST", `/v1/agents/${agent.id}/pause`, { key })).status).toBe(200);
    expect((await api("POST", `/v1/agents/${agent.id}/resume`, { key })).status).toBe(200);
    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);

    const all = await api("GET", "/v1/audit?limit=100", { key });
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    const actions = all.body.data.map((entry: any) => entry.action);
    expect(actions).toEqual(["agent.destroyed", "agent.resumed", "agent.paused", "key.revoked", "key.created", "key.created", "tenant.created"]);
    const seqs = all.body.data.map((entry: any) => entry.seq);
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
    const destroyed = all.body.data[0];
    expect(destroyed).toMatchObject({ target: agent.id, detail: { from: "active", to: "destroyed" } });
    expect(Object.keys(destroyed).sort()).toEqual(["action", "actor", "at", "detail", "seq", "target"]);
    expect(all.body.data.find((entry: any) => entry.action === "key.revoked").actor).toMatch(/^key:/);

    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await api("GET", `/v1/audit?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(3);
      pages.push(...res.body.data.map((entry: any) => entry.action));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(pages).toEqual(actions);

    expect((await api("GET", "/v1/audit?cursor=nope", { key })).status).toBe(400);
  });

  it("is isolated per tenant and needs an admin API key", async () => {
    const a = await createTenant("a");
    const b = await createTenant("b");
    await api("POST", "/v1/keys", { key: a.key, body: { name: "only-a", scopes: ["agents:read"] } });
    const seenByB = await api("GET", "/v1/audit", { key: b.key });
    expect(seenByB.body.data.map((entry: any) => entry.action)).toEqual(["key.created", "tenant.created"]);
    expect(seenByB.body.data.every((entry: any) => entry.target !== a.tenantId)).toBe(true);

    const reader = await api("POST", "/v1/keys", { key: a.key, body: { scopes: ["agents:read"] } });
    expect((await api("GET", "/v1/audit", { key: reader.body.key })).status).toBe(403);
    expect((await api("GET", "/v1/audit")).status).toBe(401);
  });
});

describe("GET /v1/metrics", () => {
  it("exposes per-tenant counters in Prometheus text format that move after a run", async () => {
    const { key } = await createTenant();
    const before = await api("GET", "/v1/metrics", { key });
    expect(before.status).toBe(200);
    expect(before.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of ["vigil_runs_total", "vigil_wakes_total", "vigil_tool_calls_total", "vigil_tokens_total", "vigil_decisions"]) {
      expect(before.body).toContain(`# HELP ${name} `);
      expect(before.body).toMatch(new RegExp(`# TYPE ${name} (counter|gauge)\\n`));
    }
    expect(before.body).not.toContain('vigil_runs_total{outcome="completed"}');

    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hello" } });
    expect(sent.status).toBe(202);
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    const text = await eventually(async () => {
      const res = await api("GET", "/v1/metrics", { key });
      return typeof res.body === "string" && res.body.includes(`vigil_runs_total{outcome="${run.status}"} 1`) ? res.body : undefined;
    });
    expect(text).toMatch(/^vigil_wakes_total\{reason="userInitiated"\} 1$/m);
    expect(text).toMatch(/^vigil_tokens_total\{direction="input"\} \d+$/m);
    // every sample line is `name{labels} value` or `name value`
    for (const line of text.trim().split("\n").filter((l: string) => !l.startsWith("#"))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? \d+$/);

    const other = await createTenant("other");
    expect((await api("GET", "/v1/metrics", { key: other.key })).body).not.toContain("vigil_runs_total{");
  });
});
