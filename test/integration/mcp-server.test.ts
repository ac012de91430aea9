import { SELF } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTaskCommand, createTenant, playbookAgentInCategory, taskTitlesIn } from "./helpers";

/** The official MCP client, talking streamable HTTP to the worker's /v1/mcp through SELF.fetch. */
async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL("https://vigil.test/v1/mcp"), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (input, init) => SELF.fetch(input instanceof URL ? input.href : (input as string), init),
  });
  const client = new Client({ name: "vigil-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; data: any }> {
  const result = await client.callTool({ name, arguments: args });
  return { isError: result.isError === true, data: result.structuredContent };
}

async function keyWithScopes(adminKey: string, scopes: string[]): Promise<string> {
  const created = await api("POST", "/v1/keys", { key: adminKey, body: { name: "mcp", scopes } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.key;
}

describe("MCP server at /v1/mcp (official client, streamable HTTP)", () => {
  it("lists the six tools with their input schemas", async () => {
    const { key } = await createTenant("mcp-list");
    const client = await connect(key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["get_history", "list_agents", "list_decisions", "resolve_decision", "search_memory", "send_message"]);
    const send = tools.find((tool) => tool.name === "send_message")!;
    expect(send.inputSchema).toMatchObject({ type: "object", required: expect.arrayContaining(["agentId", "text"]) });
    await client.close();
  });

  it("list_agents, send_message (returns the reply), get_history and search_memory act as the REST routes do", async () => {
    const { key } = await createTenant("mcp-tools");
    const agent = await createAgent(key, { displayName: "Echo" });
    const client = await connect(key);

    const listed = await call(client, "list_agents", {});
    expect(listed.isError).toBe(false);
    expect(listed.data.data).toEqual([expect.objectContaining({ id: agent.id, displayName: "Echo", lifecycle: "active" })]);

    const sent = await call(client, "send_message", { agentId: agent.id, text: "hello lighthouse", sessionId: "s1" });
    expect(sent.isError).toBe(false);
    expect(sent.data).toMatchObject({ status: "completed", reply: "echo: hello lighthouse", runStatus: "completed", sessionId: "s1" });
    // The same run REST knows, completed once.
    const run = await api("GET", `/v1/agents/${agent.id}/runs/${sent.data.runKey}`, { key });
    expect(run.body).toMatchObject({ status: "completed", reason: "userInitiated" });

    const history = await call(client, "get_history", { agentId: agent.id, sessionId: "s1" });
    expect(history.data.data.map((m: any) => [m.kind, m.text])).toEqual([
      ["assistant", "echo: hello lighthouse"],
      ["user", "hello lighthouse"],
    ]);
    expect(history.data.data.every((m: any) => m.threadId === `${agent.id}:session:s1`)).toBe(true);

    const found = await call(client, "search_memory", { agentId: agent.id, query: "lighthouse" });
    expect(found.isError).toBe(false);
    expect(found.data.data.length).toBeGreaterThan(0);
    expect(found.data.data[0].snippet).toContain("lighthouse");
    await client.close();
  });

  it("send_message stops waiting at a tool approval; list_decisions and resolve_decision settle it", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory("orchestrator");
    const client = await connect(key);
    const sent = await call(client, "send_message", { agentId: agent.id, text: createTaskCommand(categoryId, "Swim 1k") });
    expect(sent.data).toMatchObject({ status: "waiting_for_decision", reply: null });
    expect(sent.data.decisionId).toMatch(/\S/);

    const pending = await call(client, "list_decisions", { status: "pending", agentId: agent.id });
    expect(pending.data.data.map((d: any) => d.id)).toEqual([sent.data.decisionId]);
    expect(pending.data.data[0]).toMatchObject({ type: "decision/tool_approval", runKey: sent.data.runKey, payload: { toolName: "create_task" } });

    const resolved = await call(client, "resolve_decision", { decisionId: sent.data.decisionId, resolutionType: "approve" });
    expect(resolved.isError).toBe(false);
    expect(resolved.data.decision).toMatchObject({ id: sent.data.decisionId, status: "resolved" });
    // Approved through MCP, the saga runs the tool once.
    await expect.poll(() => taskTitlesIn(key, categoryId), { timeout: 15_000, interval: 200 }).toEqual(["Swim 1k"]);

    const again = await call(client, "resolve_decision", { decisionId: sent.data.decisionId, resolutionType: "reject" });
    expect(again.isError).toBe(true);
    expect(again.data.code).toBe("decision_not_pending");
    await client.close();
  });

  it("refuses a tool whose scope the key lacks, with the REST problem code", async () => {
    const { key } = await createTenant("mcp-scopes");
    const agent = await createAgent(key);
    const readOnly = await keyWithScopes(key, ["agents:read"]);
    const client = await connect(readOnly);
    const refused = await call(client, "send_message", { agentId: agent.id, text: "hi" });
    expect(refused).toMatchObject({ isError: true, data: { code: "forbidden", status: 403 } });
    const resolve = await call(client, "resolve_decision", { decisionId: "dec_x", resolutionType: "approve" });
    expect(resolve.data.code).toBe("forbidden");
    // Arguments are checked against the tool's schema before any scope or agent lookup.
    const invalid = await client.callTool({ name: "get_history", arguments: { agentId: "../x" } });
    expect(invalid.isError).toBe(true);
    expect(JSON.stringify(invalid.content)).toContain("Input validation error");
    // Reading is within its scope.
    expect((await call(client, "list_agents", {})).isError).toBe(false);
    expect((await call(client, "get_history", { agentId: agent.id })).isError).toBe(false);
    // No message was sent: nothing in the history.
    expect((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data).toEqual([]);
    await client.close();

    const journalOnly = await keyWithScopes(key, ["journal:read"]);
    const journalClient = await connect(journalOnly);
    expect((await call(journalClient, "list_agents", {})).data.code).toBe("forbidden");
    await journalClient.close();
  });

  it("keeps tenants apart: another tenant's agents and decisions look absent", async () => {
    const a = await createTenant("mcp-a");
    const b = await createTenant("mcp-b");
    const agentA = await createAgent(a.key, { displayName: "A's" });
    await api("POST", `/v1/agents/${agentA.id}/messages`, { key: a.key, body: { text: "secret plans" } });
    const client = await connect(b.key);
    expect((await call(client, "list_agents", {})).data.data).toEqual([]);
    for (const [tool, args] of [
      ["send_message", { agentId: agentA.id, text: "hi" }],
      ["get_history", { agentId: agentA.id }],
      ["search_memory", { agentId: agentA.id, query: "secret" }],
    ] as const) {
      const refused = await call(client, tool, args);
      expect(refused, tool).toMatchObject({ isError: true, data: { code: "not_found", status: 404 } });
    }
    expect((await call(client, "list_decisions", { agentId: agentA.id })).data.data).toEqual([]);
    await client.close();
  });

  it("a widget token sees only its agents and its own session; recall stays API-key only", async () => {
    const { key } = await createTenant("mcp-widget");
    const mine = await createAgent(key, { displayName: "Mine" });
    await createAgent(key, { displayName: "Other" });
    await api("POST", `/v1/agents/${mine.id}/messages`, { key, body: { text: "operator only", sessionId: "ops" } });
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "visitor-1", agents: [mine.id], scope: ["agents:read", "agents:write"], ttlSeconds: 600 } });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    const client = await connect(minted.body.token);
    expect((await call(client, "list_agents", {})).data.data.map((a: any) => a.id)).toEqual([mine.id]);
    const sent = await call(client, "send_message", { agentId: mine.id, text: "from the widget" });
    expect(sent.data).toMatchObject({ status: "completed", reply: "echo: from the widget" });
    const history = await call(client, "get_history", { agentId: mine.id });
    expect(history.data.data.map((m: any) => m.text)).toEqual(["echo: from the widget", "from the widget"]);
    expect((await call(client, "get_history", { agentId: mine.id, sessionId: "ops" })).data.code).toBe("not_found");
    expect((await call(client, "search_memory", { agentId: mine.id, query: "operator" })).data.code).toBe("forbidden");
    await client.close();
  });

  it("send_message follows the agent's double-texting policy: reject is a run_in_progress tool error", async () => {
    const { key } = await createTenant("mcp-double-texting");
    // Words 400 ms apart: the busy run is still in flight after the MCP client connects, even on a loaded machine.
    const agent = await createAgent(key, { doubleTexting: "reject", modelOptions: { chunkDelayMs: 400 } });
    const busy = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "a long message that keeps this agent busy for a while", sessionId: "s1" } });
    expect(busy.status).toBe(202);
    const client = await connect(key);
    const refused = await call(client, "send_message", { agentId: agent.id, text: "too soon", sessionId: "s1" });
    expect(refused).toMatchObject({ isError: true, data: { code: "run_in_progress", status: 409 } });
    // The message's own policy wins: queued behind the busy run, then answered.
    const queued = await call(client, "send_message", { agentId: agent.id, text: "after you", sessionId: "s1", doubleTexting: "enqueue" });
    expect(queued.data).toMatchObject({ status: "completed", reply: "echo: after you" });
    await client.close();
  });

  it("answers 401 problem+json without credentials, and 405 to GET and DELETE (stateless: no session stream)", async () => {
    const anonymous = await SELF.fetch("https://vigil.test/v1/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("content-type")).toContain("application/problem+json");
    const { key } = await createTenant("mcp-http");
    const get = await SELF.fetch("https://vigil.test/v1/mcp", { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    await get.body?.cancel();
    const del = await SELF.fetch("https://vigil.test/v1/mcp", { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    expect(del.status).toBe(405);
    await del.body?.cancel();
    const bad = await api("POST", "/v1/mcp", { key, body: { hello: "world" } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
  });
});
