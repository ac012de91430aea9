/**
 * The MCP client end to end (issue 15.1): a real `wrangler dev` reaches a real MCP server built with
 * the official SDK over streamable HTTP on 127.0.0.1 (local mode). Assertions are on what the server
 * actually received and did: listing, a read tool, a mutating tool cut off by a crash (the TenantDO is
 * reset after the server answered, before the answer is recorded — exactly one effect, never resent),
 * an approval, and denied egress.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpTestServer } from "../support/mcp-test-server";
import { eventually, raw, type VigilServer } from "./harness";
import { sharedSeamsServer } from "./shared-server";

let server: VigilServer;
let mcp: McpTestServer;

beforeAll(async () => {
  mcp = await McpTestServer.start();
  // Calls of `mcp_crashy_add_note` reset the TenantDO after the server answered, before the answer is recorded.
  server = sharedSeamsServer();
});
afterAll(async () => {
  await mcp?.close();
});

async function tenant(name: string) {
  const { apiKey } = await server.tenant(name);
  const call = (method: string, path: string, body?: unknown) =>
    raw<any>(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { apiKey, call };
}
type Call = Awaited<ReturnType<typeof tenant>>["call"];

const registerNotes = (call: Call, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/mcp-servers", { name: "notes", url: mcp.url, riskLevel: "low", capability: "taskWrite", toolFilter: ["lookup", "add_note", "extra"], ...extra });

const agentWith = async (call: Call, extra: Record<string, unknown> = {}) =>
  (await call("POST", "/v1/agents", { kind: "coach", displayName: "Mcp", model: "builtin:playbook", playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "got: {{results.0.ok}}" }] }, ...extra })).body;

const terminalRun = (call: Call, agentId: string, runKey: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const run = (await call("GET", `/v1/agents/${agentId}/runs/${runKey}`)).body;
    return run && !["queued", "running", "waiting", "ready"].includes(run.status) ? run : null;
  }, timeoutMs, 200);

const toolResults = async (call: Call, agentId: string) => ((await call("GET", `/v1/agents/${agentId}/messages`)).body.data as any[]).filter((m) => m.kind === "toolResult");

describe("MCP client against a real MCP server on 127.0.0.1", () => {
  it("lists the server's tools (filtered) as mcp_<server>_<tool> with their input schemas, and refreshes after notifications/tools/list_changed", async () => {
    const { call } = await tenant("mcp-list");
    const registered = await registerNotes(call);
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body).toMatchObject({ name: "notes", lastError: null, toolsVersion: 1, auth: "none" });
    expect(registered.body.tools).toEqual([
      { name: "mcp_notes_lookup", remoteName: "lookup", description: "Look a word up", mutating: false },
      { name: "mcp_notes_add_note", remoteName: "add_note", description: "Add a note (a side effect the server counts)", mutating: true },
    ]);
    const catalog = (await call("GET", "/v1/tools")).body.data as any[];
    const lookup = catalog.find((tool) => tool.name === "mcp_notes_lookup");
    expect(lookup).toMatchObject({ kind: "mcp", riskLevel: "low", capabilitiesRequired: ["taskWrite"], sideEffects: { kind: "none" } });
    expect(lookup.inputSchema).toMatchObject({ type: "object", properties: { word: { type: "string" } }, required: ["word"] });
    expect(catalog.find((tool) => tool.name === "mcp_notes_add_note").sideEffects.kind).toBe("external_mcp");
    expect(catalog.some((tool) => tool.name === "mcp_notes_hidden")).toBe(false);

    // The server gains a tool and says so on the answer of the next call: the tenant refetches the list at once, in
    // the background, long before the 5-minute TTL, and pushes it into the agents' snapshots.
    mcp.addTool("extra");
    const agent = await agentWith(call);
    const listsBefore = mcp.methods.filter((method) => method === "tools/list").length;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: '/tool mcp_notes_add_note {"text":"list-changed"}' });
    expect((await terminalRun(call, agent.id, sent.body.runKey)).status).toBe("completed");
    expect((await toolResults(call, agent.id))[0].content).toMatchObject({ ok: true, toolName: "mcp_notes_add_note" });
    // The refetch runs in the background: it may land just after the run has completed.
    await eventually(async () => mcp.methods.filter((method) => method === "tools/list").length > listsBefore, 30_000, 200);
    // GET /v1/mcp-servers never fetches: what it shows was refreshed because of the notification.
    const server = await eventually(async () => {
      const listed = (await call("GET", "/v1/mcp-servers")).body.data[0];
      return listed?.toolsVersion === 2 ? listed : undefined;
    }, 30_000, 200);
    expect(server).toMatchObject({ toolsVersion: 2, lastError: null });
    expect(server.tools.map((tool: any) => tool.name)).toContain("mcp_notes_extra");
    const refreshed = (await call("GET", "/v1/tools")).body.data as any[];
    expect(refreshed.find((tool) => tool.name === "mcp_notes_extra")).toMatchObject({ kind: "mcp", version: 2 });
  });

  it("an agent calls a read tool: the server gets exactly the declared arguments, the answer reaches the run; an undeclared argument never leaves", async () => {
    const { call } = await tenant("mcp-read");
    expect((await registerNotes(call)).status).toBe(201);
    const agent = await agentWith(call, { playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "meaning: {{results.0.output.structuredContent.meaning}}" }] } });
    const before = mcp.callsOf("lookup").length;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: '/tool mcp_notes_lookup {"word":"vigil"}' });
    expect((await terminalRun(call, agent.id, sent.body.runKey)).status).toBe("completed");
    expect(mcp.callsOf("lookup").slice(before)).toEqual([expect.objectContaining({ args: { word: "vigil" } })]);
    const messages = (await call("GET", `/v1/agents/${agent.id}/messages`)).body.data as any[];
    expect(messages.find((m) => m.kind === "toolResult").content).toMatchObject({ ok: true, toolName: "mcp_notes_lookup", output: { structuredContent: { word: "vigil", meaning: "a word" } } });
    expect(messages.find((m) => m.kind === "assistant").text).toBe("meaning: a word");

    // NEED_TO_KNOW on the argument bytes: a field the tool's schema does not declare blocks the request.
    const leaky = await call("POST", `/v1/agents/${agent.id}/messages`, { text: '/tool mcp_notes_lookup {"word":"x","userEmail":"a@b.c"}' });
    await terminalRun(call, agent.id, leaky.body.runKey);
    expect(mcp.callsOf("lookup").slice(before)).toHaveLength(1);
    const refused = (await toolResults(call, agent.id))[0];
    expect(refused.content).toMatchObject({ ok: false, code: "overshared_payload_blocked" });
    expect(refused.content.message).toContain("params.arguments.userEmail");
  });

  it("a mutating tool cut off by a crash between send and record: one effect on the server, never resent, the run ends with outcome_unknown", async () => {
    const { call } = await tenant("mcp-crash");
    expect((await registerNotes(call, { name: "crashy" })).status).toBe(201);
    const agent = await agentWith(call);
    const before = mcp.notes.length;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: '/tool mcp_crashy_add_note {"text":"exactly-once"}' });
    expect(sent.status).toBe(202);
    const run = await terminalRun(call, agent.id, sent.body.runKey, 60_000);
    expect(run.status).toBe("completed");
    // The server executed the call once; the saga's retry after the crash found the intent and did not resend.
    expect(mcp.notes.slice(before)).toEqual(["exactly-once"]);
    expect(mcp.callsOf("add_note").filter((c) => c.args.text === "exactly-once")).toHaveLength(1);
    const results = await toolResults(call, agent.id);
    expect(results).toHaveLength(1);
    expect(results[0].content).toMatchObject({ ok: false, code: "outcome_unknown", retryable: false, details: { requestSent: true } });
    // The audit shows the one request that left, and no second one.
    const sentCalls = ((await call("GET", "/v1/audit")).body.data as any[]).filter((entry) => entry.action === "egress.mcp" && entry.detail.toolName === "mcp_crashy_add_note" && entry.detail.method === "POST");
    expect(new Set(sentCalls.map((entry) => entry.target))).toEqual(new Set([results[0].content.actionRefId]));
  });

  it("a mutating tool that needs approval reaches the server only after a person approves it, once", async () => {
    const { call } = await tenant("mcp-approval");
    expect((await registerNotes(call, { riskLevel: "medium" })).status).toBe(201);
    const agent = await agentWith(call, { controlMode: "orchestrator" });
    const before = mcp.notes.length;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: '/tool mcp_notes_add_note {"text":"approved"}' });
    const decision = await eventually(async () => ((await call("GET", "/v1/decisions?status=pending")).body.data as any[]).find((d) => d.payload?.toolName === "mcp_notes_add_note"), 30_000, 200);
    expect(decision.payload).toMatchObject({ kind: "tool_approval", riskLevel: "medium", argsPreview: { text: "approved" } });
    expect(mcp.notes.slice(before)).toEqual([]);
    expect((await call("POST", `/v1/decisions/${decision.id}/resolve`, { resolutionType: "approve" })).status).toBe(200);
    const run = await terminalRun(call, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    expect(mcp.notes.slice(before)).toEqual(["approved"]);
    expect((await toolResults(call, agent.id))[0].content).toMatchObject({ ok: true, toolName: "mcp_notes_add_note", output: { structuredContent: { count: expect.any(Number) } } });
  });

  it("denied hosts: a public plain-http URL is refused at registration, and a server that redirects to another host is never followed", async () => {
    const { call } = await tenant("mcp-denied");
    const publicHttp = await call("POST", "/v1/mcp-servers", { name: "public", url: "http://mcp.example.com/mcp", capability: "taskRead" });
    expect(publicHttp.status).toBe(400);
    expect(publicHttp.body.code).toBe("validation_failed");
    const moved = await call("POST", "/v1/mcp-servers", { name: "moved", url: mcp.movedUrl, capability: "taskRead" });
    expect(moved.status).toBe(201);
    expect(moved.body.tools).toEqual([]);
    expect(moved.body.lastError).toMatch(/network_denied/);
    const audit = (await call("GET", "/v1/audit")).body.data as any[];
    expect(audit).toContainEqual(expect.objectContaining({ action: "egress.mcp", detail: expect.objectContaining({ purpose: "mcp", outcome: "denied", host: new URL(mcp.movedUrl).host }) }));
    // Another tenant never sees this tenant's servers.
    const other = await tenant("mcp-other");
    expect((await other.call("GET", "/v1/mcp-servers")).body.data).toEqual([]);
    expect((await other.call("DELETE", `/v1/mcp-servers/${moved.body.id}`)).status).toBe(404);
  });
});
