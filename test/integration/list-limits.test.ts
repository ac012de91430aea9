import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { ADMIN, api, createAgent, createTenant } from "./helpers";

/**
 * Every paged list answers at every allowed `limit` (1…maxLimit) on data larger than a page, and no
 * cursor, however odd, turns into a 500 (issue 13.5: `runs?limit=100` hit SQLite's 100-variable cap).
 * The routes are read from the OpenAPI document, so a new list route is covered without editing this file.
 */
const ROWS = config.pagination.maxLimit + 3;
const LIMITS = [1, 100, 101, config.pagination.maxLimit];
const b64 = (value: unknown) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value)))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
/** Empty, garbage, wrong shapes, and each list's real shapes at their extremes (numbers, empty and huge strings, SQL). */
const CURSORS = [
  "",
  "%00",
  "a".repeat(512),
  b64(null),
  b64({ s: 1e308 }),
  b64({ e: "\uffff", k: "" }),
  b64({ c: -1e18, i: "'; DROP TABLE runs; --" }),
  b64({ c: "9999-12-31T23:59:59.999Z", i: "z".repeat(300) }),
];

let key: string;
let tenantId: string;
let agentId: string;
let agentIds: string[];
let webhookId: string;
let listRoutes: string[];

function seedAgentHistory(instance: AgentDO): void {
  const storage = (instance as any).ctx.storage as DurableObjectStorage;
  const base = Date.parse("2026-01-01T00:00:00.000Z");
  storage.transactionSync(() => {
    for (let i = 0; i < ROWS; i++) {
      const at = new Date(base + i * 1000).toISOString();
      const runKey = i.toString(16).padStart(64, "0");
      storage.sql.exec(
        "INSERT INTO runs (run_key, reason, thread_id, status, attempt, enqueued_at, started_at, ended_at, trace) VALUES (?, 'manual', ?, 'completed', 1, ?, ?, ?, '{}')",
        runKey,
        `${agentId}:run:${runKey}`,
        at,
        at,
        at,
      );
      storage.sql.exec(
        "INSERT INTO actions (operation_id, run_key, step, call_index, tool_call_id, tool_name, tool_version, args, action_stable_id, risk_level, preview_only, envelope, status, result, created_at, updated_at) VALUES (?, ?, 1, 0, ?, 'memory_search', '1', '{}', ?, 'low', 0, '{}', 'completed', '{\"ok\":true}', ?, ?)",
        `op_${i}`,
        runKey,
        `call_${i}`,
        `stable_${i}`,
        at,
        at,
      );
      storage.sql.exec("INSERT INTO run_trace (run_key, seq, kind, data, created_at) VALUES (?, 1, 'usage', '{\"inputTokens\":3,\"outputTokens\":2,\"costMicros\":1}', ?)", runKey, at);
      storage.sql.exec("INSERT INTO messages (id, thread_id, kind, text, metadata, created_at) VALUES (?, ?, 'user', ?, '{}', ?)", `seed-${i}`, `${agentId}:session:default`, `seeded ${i}`, at);
    }
  });
}

beforeAll(async () => {
  ({ key, tenantId } = await createTenant("lists"));
  agentId = (await createAgent(key)).id;
  // A hundred agents: a full agents list, and a widget token naming the most agents a token may name.
  agentIds = [agentId];
  let creator = await freshKey();
  for (let i = 0; i < 99; i++) {
    if (i % 40 === 39) creator = await freshKey();
    agentIds.push((await createAgent(creator, { displayName: `Agent ${i}` })).id);
  }
  await runInDurableObject(env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`)), async (instance: AgentDO) => seedAgentHistory(instance));
  webhookId = (await api("POST", "/v1/webhooks", { key, body: { url: "http://127.0.0.1:9/hooks", eventTypes: ["*"] } })).body.id;
  const doc = (await api("GET", "/v1/openapi.json")).body as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string; schema?: { maximum?: number } }> }>> };
  // A paged list is a GET whose `limit` goes up to the list maximum (memory search has its own, smaller top-k).
  listRoutes = Object.entries(doc.paths)
    .filter(([, item]) => item.get?.parameters?.some((p) => p.in === "query" && p.name === "limit" && p.schema?.maximum === config.pagination.maxLimit))
    .map(([path]) => path.replace("/v1/agents/{id}", `/v1/agents/${agentId}`).replace("/v1/webhooks/{id}", `/v1/webhooks/${webhookId}`));
}, 120_000);

/** A fresh key per route and test: the per-client rate limit (100/min) is not what is under test here. */
let minter: { key: string; uses: number } | undefined;
async function mintKey(by: string): Promise<string> {
  const res = await api("POST", "/v1/keys", { key: by, body: { scopes: ["admin", "agents:read", "agents:write", "journal:read", "journal:write"] } });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.key;
}
async function freshKey(): Promise<string> {
  // The minting key itself is replaced before it nears its own limit.
  if (!minter || minter.uses >= 40) minter = { key: await mintKey(minter?.key ?? key), uses: 0 };
  minter.uses++;
  return mintKey(minter.key);
}

/** The operator's list (the tenant registry) answers the operator token; every other list a tenant key. */
const callerOf = (path: string, key: string) => (path === "/v1/tenants" ? ADMIN : key);

const join = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;

describe("paged lists at every allowed limit", () => {
  it("finds the list routes in the OpenAPI document, with no unfilled path parameter", () => {
    expect(listRoutes.length).toBeGreaterThan(15);
    expect(listRoutes.filter((path) => path.includes("{"))).toEqual([]);
    expect(listRoutes).toContain(`/v1/agents/${agentId}/runs`);
  });

  it("every list route answers 200 at limits 1, 100, 101 and max, never more rows than asked, and 400 at max+1", async () => {
    const failures: string[] = [];
    for (const path of listRoutes) {
      const key = await freshKey();
      for (const limit of LIMITS) {
        const res = await api("GET", join(path, `limit=${limit}`), { key: callerOf(path, key) });
        if (res.status !== 200 || !Array.isArray(res.body?.data) || res.body.data.length > limit) failures.push(`${path} limit=${limit}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
      const over = await api("GET", join(path, `limit=${config.pagination.maxLimit + 1}`), { key: callerOf(path, key) });
      if (over.status !== 400 || over.body?.code !== "validation_failed") failures.push(`${path} limit=max+1: ${over.status}`);
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it("runs and messages with more rows than the largest page: every limit walks all of them once, in order", async () => {
    for (const path of [`/v1/agents/${agentId}/runs`, `/v1/agents/${agentId}/messages`]) {
      const key = await freshKey();
      for (const limit of [7, 100, config.pagination.maxLimit]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res: { status: number; body: any } = await api("GET", join(path, `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`), { key });
          expect(res.status, `${path} limit=${limit}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
          seen.push(...res.body.data.map((row: any) => row.runKey ?? row.id));
          cursor = res.body.nextCursor;
        } while (cursor);
        expect(seen.length).toBeGreaterThanOrEqual(ROWS);
        expect(new Set(seen).size).toBe(seen.length);
      }
    }
    const page = await api("GET", `/v1/agents/${agentId}/runs?limit=${config.pagination.maxLimit}`, { key });
    expect(page.body.data[0].trace).toMatchObject({ toolCallCount: 1, usage: { inputTokens: 3, outputTokens: 2, calls: 1 } });
  }, 300_000);

  it("a widget token naming 100 agents lists decisions at the largest limit", async () => {
    const minted = await api("POST", "/v1/tokens", { key: await freshKey(), body: { sub: "visitor", agents: agentIds, ttlSeconds: 600 } });
    expect(minted.status).toBe(201);
    const res = await api("GET", `/v1/decisions?limit=${config.pagination.maxLimit}`, { key: minted.body.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it("odd cursors on every list route answer 200 or a 400 problem, never a 5xx", async () => {
    const failures: string[] = [];
    for (const path of listRoutes) {
      const key = await freshKey();
      for (const cursor of CURSORS) {
        for (const limit of [config.pagination.maxLimit]) {
          const res = await api("GET", join(path, `limit=${limit}&cursor=${encodeURIComponent(cursor)}`), { key: callerOf(path, key) });
          const fine = res.status === 200 || (res.status === 400 && res.headers.get("content-type")?.includes("application/problem+json") && typeof res.body?.code === "string");
          if (!fine) failures.push(`${path} cursor=${cursor.slice(0, 40)} limit=${limit}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);
});
