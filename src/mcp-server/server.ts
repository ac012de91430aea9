import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { config } from "../config";
import { DOUBLE_TEXTING_POLICIES } from "../core/wakes/double-texting";
import { threadIds } from "../core/ids/run-keys";
import type { Env } from "../env";
import { ApiError, fail } from "../http/api-error";
import { agentFor, requireApiKey, requireScope, sessionFor, tenantStub, widgetNamespace } from "../http/auth";
import { actorOf, type Principal } from "../http/context";
import { randomId } from "../ids";
import { widgetThread } from "../routes/agents/messages";
import { ListDecisionsQuery, ResolveBody } from "../routes/agents/decisions";
import { ResourceId } from "../schema/common";
import { awaitTurn } from "./reply";

const Limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);
const Cursor = z.string().max(512).optional();

/**
 * One MCP server per request (stateless streamable HTTP), bound to the caller the auth middleware resolved.
 * Each tool makes the same checks and the same Durable Object call as its REST route, so scopes, widget-token
 * confinement and tenant isolation hold the same way; a refusal is a tool error carrying the REST problem `code`.
 */
export function mcpServerFor(env: Env, principal: Principal): McpServer {
  const server = new McpServer({ name: "vigil", version: "1.0.0" }, { instructions: "Vigil agents: list them, talk to them, read their history and memory, and answer the decisions they wait on." });

  server.registerTool(
    "list_agents",
    {
      description: "The tenant's agents (a widget token sees only its own), newest first. Same as GET /v1/agents.",
      inputSchema: z.object({ limit: Limit(config.pagination.maxLimit, 50), cursor: Cursor }),
      annotations: { readOnlyHint: true },
    },
    (args) =>
      answer(async () => {
        requireScope(principal, "agents:read");
        const result = await tenantStub(env, principal.tenantId).listAgents({ limit: args.limit, cursor: args.cursor, includeChildren: false });
        if (!result.ok) fail(result);
        const visible = principal.kind === "jwt" ? result.data.filter((agent) => principal.agents.includes(agent.id)) : result.data;
        const data = visible.map(({ id, kind, displayName, lifecycle, mode, createdAt }) => ({ id, kind, displayName, lifecycle, mode, createdAt }));
        return { data, nextCursor: result.nextCursor };
      }),
  );

  server.registerTool(
    "send_message",
    {
      description:
        "Send a user message to an agent and wait (at most waitSeconds) for its reply. Same as POST /v1/agents/{id}/messages. " +
        "status: completed (reply set) | failed | waiting_for_decision (resolve decisionId, then read get_history) | in_progress (the reply lands in get_history later).",
      inputSchema: z.object({
        agentId: ResourceId,
        text: z.string().min(1).max(32_000),
        sessionId: ResourceId.optional(),
        waitSeconds: z.number().int().min(1).max(config.mcpServer.maxWaitSeconds).default(config.mcpServer.defaultWaitSeconds),
        doubleTexting: z.enum(DOUBLE_TEXTING_POLICIES).optional().describe("while a run of the session is in flight: enqueue | reject | interrupt | merge (default: the agent's setting)"),
      }),
    },
    (args) =>
      answer(async () => {
        const agent = agentFor(principal, env, args.agentId, "agents:write");
        const sessionId = sessionFor(principal, args.sessionId);
        const result = await agent.submitTurn({ text: args.text, sessionId, turnId: randomId("turn_"), credential: principal.kind, stream: true, doubleTexting: args.doubleTexting });
        if (!result.ok) fail(result);
        if (!result.stream) return { runKey: result.runKey, status: "in_progress" };
        return { sessionId, ...(await awaitTurn(result.stream, result.runKey, args.waitSeconds * 1000)) };
      }),
  );

  server.registerTool(
    "get_history",
    {
      description: "An agent's messages, newest first: one session's thread (sessionId), one thread (threadId), or, for an API key without either, every thread. Same as GET /v1/agents/{id}/messages.",
      inputSchema: z.object({ agentId: ResourceId, sessionId: ResourceId.optional(), threadId: z.string().max(300).optional(), limit: Limit(config.pagination.maxLimit, 20), cursor: Cursor }),
      annotations: { readOnlyHint: true },
    },
    (args) =>
      answer(async () => {
        const agent = agentFor(principal, env, args.agentId, "agents:read");
        const threadId = principal.kind === "jwt" ? widgetThread(principal, args.agentId, args) : (args.threadId ?? (args.sessionId ? threadIds.interactive(args.agentId, args.sessionId) : undefined));
        const result = await agent.listMessages({ limit: args.limit, cursor: args.cursor, threadId });
        if (!result.ok) fail(result);
        return { data: result.data, nextCursor: result.nextCursor };
      }),
  );

  server.registerTool(
    "list_decisions",
    {
      description: "Decisions waiting on (or answered by) a person: tool approvals and ask_user questions, newest first. Same as GET /v1/decisions.",
      inputSchema: z.object({ status: ListDecisionsQuery.shape.status, agentId: ListDecisionsQuery.shape.agentId, type: ListDecisionsQuery.shape.type, limit: Limit(config.pagination.maxLimit, 50), cursor: Cursor }),
      annotations: { readOnlyHint: true },
    },
    (args) =>
      answer(async () => {
        requireScope(principal, "agents:read");
        const result = await tenantStub(env, principal.tenantId).listDecisions({ ...args, agentIds: principal.kind === "jwt" ? principal.agents : undefined, widgetNamespace: widgetNamespace(principal) });
        if (!result.ok) fail(result);
        return { data: result.data, nextCursor: result.nextCursor };
      }),
  );

  server.registerTool(
    "resolve_decision",
    {
      description: "Answer a decision: approve | modify (modifiedArgs) | reject a tool approval; choose_option (chosenOptionId and/or answerText) | reject a question. Same as POST /v1/decisions/{id}/resolve.",
      inputSchema: ResolveBody.extend({ decisionId: ResourceId }),
    },
    ({ decisionId, ...body }) =>
      answer(async () => {
        requireScope(principal, "agents:write");
        if (body.alwaysApprove && principal.kind === "jwt") throw new ApiError("forbidden", "alwaysApprove needs an API key; widget tokens approve one call at a time");
        const result = await tenantStub(env, principal.tenantId).resolveDecision(actorOf(principal), decisionId, body, principal.kind === "jwt" ? principal.agents : undefined, widgetNamespace(principal));
        if (!result.ok) fail(result);
        return { decision: result.decision };
      }),
  );

  server.registerTool(
    "search_memory",
    {
      description: "Full-text recall over an agent's messages and summaries, best first (API keys only). Same as GET /v1/agents/{id}/memory/search.",
      inputSchema: z.object({ agentId: ResourceId, query: z.string().trim().min(1).max(500), limit: Limit(50, 20) }),
      annotations: { readOnlyHint: true },
    },
    (args) =>
      answer(async () => {
        const agent = agentFor(principal, env, args.agentId, "agents:read");
        // Recall spans every session's messages: API keys only, as on the REST route.
        requireApiKey(principal);
        const result = await agent.searchMemory(args.query, args.limit);
        if (!result.ok) fail(result);
        return { data: result.hits };
      }),
  );

  return server;
}

/**
 * A tool's answer: its data as structured content (and as JSON text for clients that read only text). An
 * `ApiError` becomes a tool error with the REST problem's `code` and `status` (MCP reports tool failures in the
 * result, not as protocol errors); anything else is logged and answered as `internal_error`.
 */
async function answer(work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const data = await work();
    return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
  } catch (error) {
    const problem = error instanceof ApiError ? error : null;
    if (!problem) console.error(JSON.stringify({ level: "error", msg: "mcp tool failed", error: String(error) }));
    const body = problem ? { code: problem.code, status: problem.status, detail: problem.detail } : { code: "internal_error", status: 500, detail: "an internal error occurred" };
    return { isError: true, content: [{ type: "text", text: `${body.code}: ${body.detail}` }], structuredContent: body };
  }
}
