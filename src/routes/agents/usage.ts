import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { agentFor } from "../../http/auth";
import { createRouter } from "../../http/app";
import { AgentUsage, UsageQuery } from "../../schema/admin/brakes";
import { AgentIdParam } from "../../schema/common";
import { json, problems, security } from "../openapi-helpers";

/** `GET /v1/agents/:id/usage`: an agent's daily budget usage (tenant-local day) against its limits and tool quotas. */
export const usageRoutes = createRouter();

usageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/usage",
    summary: "Daily usage (tokens, cost, runtime, tool calls) against the budgets and tool quotas in force",
    description: "`day` is a tenant-local date (YYYY-MM-DD), today by default. Limits are the agent's own budgets over the tenant policy's; null is unlimited.",
    request: { params: AgentIdParam, query: UsageQuery },
    responses: { 200: json(AgentUsage, "Usage vs limits"), 400: problems[400], 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const result = await agentFor(c.get("principal"), c.env, id, "agents:read").getUsage(c.req.valid("query").day);
    if (!result.ok) fail(result);
    return c.json(result.usage, 200);
  },
);
