import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, agentStub, requireScope, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { idempotent } from "../../http/idempotency";
import { H } from "../../core/ids/hash";
import { randomId } from "../../ids";
import { Agent, AgentState, CreateAgentBody, ListAgentsQuery, PatchAgentBody } from "../../schema/agents/agents";
import { AgentIdParam, PaginationQuery } from "../../schema/common";
import type { Env } from "../../env";
import type { Principal } from "../../http/context";
import { agentReadRoute } from "./agent-resource-routes";
import { listRoute } from "../list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

export const agentRoutes = createRouter();
agentRoutes.post("/v1/agents", idempotent());

/** The agent a change names, for a caller with `agents:write` that is not a widget token (they cannot `refusal`). */
function agentToChange(principal: Principal, env: Env, agentId: string, refusal: string) {
  requireScope(principal, "agents:write");
  if (principal.kind === "jwt") throw new ApiError("forbidden", `widget tokens cannot ${refusal}`);
  return agentStub(env, principal.tenantId, agentId);
}

agentRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents",
    summary: "Create an agent",
    request: { ...jsonBody(CreateAgentBody), headers: IdempotencyHeader },
    responses: { 201: json(Agent, "The agent"), 400: problems[400], 401: problems[401] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:write");
    if (principal.kind === "jwt") throw new ApiError("forbidden", "widget tokens cannot create agents");
    // Under an Idempotency-Key the id derives from it: a retry after a lapsed claim finds the agent its
    // first attempt created instead of creating a second one (docs/decisions.md "Edges (issue 13)").
    const requestKey = c.req.header("idempotency-key");
    const body = c.req.valid("json");
    const agentId = requestKey ? `ag_${H("agent-create", principal.tenantId, requestKey, JSON.stringify(body)).slice(0, 20)}` : randomId("ag_");
    const agent = agentStub(c.env, principal.tenantId, agentId);
    const created = await agent.createAgent(principal.tenantId, agentId, body);
    const existing = !created.ok && created.code === "conflict" && requestKey ? await agent.getAgent() : null;
    if (!existing && !created.ok) fail(created);
    const answer = existing ?? (created.ok ? created.agent : null)!;
    if (answer.lifecycle === "destroyed") return c.json(answer, 201);
    // Keyed, the agent's subscriptions and timers derive their ids too: a retry completes what a first attempt
    // killed halfway left undone, and finds (never duplicates) what it did.
    const childId = (prefix: string, kind: string, index: number) => (requestKey ? `${prefix}${H("agent-create", agentId, kind, index).slice(0, 20)}` : undefined);
    for (const [index, subscription] of body.subscriptions.entries()) {
      const made = await tenantStub(c.env, principal.tenantId).createSubscription(agentId, subscription, childId("sub_", "subscription", index));
      if (!made.ok) fail(made);
    }
    for (const [index, timer] of body.timers.entries()) {
      const made = await agent.createTimer(timer, childId("tm_", "timer", index));
      if (!made.ok) fail(made);
    }
    return c.json(answer, 201);
  },
);

listRoute(agentRoutes, {
  path: "/v1/agents",
  summary: "List agents (children only with ?include=children), filtered by lifecycle, mode, kind and text",
  query: PaginationQuery.merge(ListAgentsQuery),
  item: Agent,
  pageDescription: "A page of agents",
  errors: { 400: problems[400], 401: problems[401] },
  read: (c, { query }) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    const { limit, cursor, include, lifecycle, mode, kind, q } = query;
    return tenantStub(c.env, principal.tenantId).listAgents({ limit, cursor, includeChildren: include === "children", filters: { lifecycle, mode, kind, q } });
  },
  // A widget token sees only the agents it names.
  view: (agents, c) => {
    const principal = c.get("principal");
    return principal.kind === "jwt" ? agents.filter((agent) => principal.agents.includes(agent.id)) : agents;
  },
});

agentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}",
    summary: "Get an agent",
    request: { params: AgentIdParam },
    responses: { 200: json(Agent, "The agent"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const agent = await agentFor(c.get("principal"), c.env, id, "agents:read").getAgent();
    if (!agent) throw new ApiError("not_found", "agent not found");
    return c.json(agent, 200);
  },
);

agentRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/v1/agents/{id}",
    summary: "Change an agent's configuration (optional optimistic `version`)",
    request: { params: AgentIdParam, ...jsonBody(PatchAgentBody) },
    responses: { 200: json(Agent, "The agent"), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const result = await agentToChange(c.get("principal"), c.env, c.req.valid("param").id, "reconfigure agents").patchAgent(c.req.valid("json"));
    if (!result.ok) fail(result);
    return c.json(result.agent, 200);
  },
);

/** The lifecycle commands: destroy (terminal), pause (dormant), resume (active). */
const lifecycleRoutes = [
  { command: "destroy", method: "delete", path: "/v1/agents/{id}", summary: "Destroy an agent (terminal)", answer: "The destroyed agent", what: "destroy agents", errors: { 404: problems[404] } },
  { command: "pause", method: "post", path: "/v1/agents/{id}/pause", summary: "Pause an agent (dormant)", answer: "The agent", what: "change lifecycle", errors: { 404: problems[404], 409: problems[409] } },
  { command: "resume", method: "post", path: "/v1/agents/{id}/resume", summary: "Resume an agent (active)", answer: "The agent", what: "change lifecycle", errors: { 404: problems[404], 409: problems[409] } },
] as const;

for (const { command, method, path, summary, answer, what, errors } of lifecycleRoutes) {
  const route = createRoute({ method, path, summary, request: { params: AgentIdParam }, responses: { 200: json(Agent, answer), ...errors }, security });
  agentRoutes.openapi(route, async (c) => {
    const result = await agentToChange(c.get("principal"), c.env, c.req.valid("param").id, what).applyLifecycle(command);
    if (!result.ok) fail(result);
    return c.json(result.agent, 200);
  });
}

agentReadRoute(agentRoutes, {
  path: "/v1/agents/{id}/state",
  summary: "The agent's state (seed 000 AgentState)",
  item: AgentState,
  answer: "State",
  read: (agent) => agent.getState(),
  view: ({ state }) => state,
});

export const WakeBody = z.object({ note: z.string().max(2000).optional() }).strict();
