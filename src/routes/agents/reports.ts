import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { agentFor } from "../../http/auth";
import { createRouter } from "../../http/app";
import { AgentIdParam } from "../../schema/common";
import { ListReportsQuery, Report, ReportHeadView, ReportScopeParam } from "../../schema/agents/reports";
import { agentListRoute } from "../list-route";
import { json, problems, security } from "../openapi-helpers";

export const reportRoutes = createRouter();

agentListRoute(reportRoutes, {
  path: "/v1/agents/{id}/reports",
  summary: "Every report the agent has published (immutable), newest first",
  query: ListReportsQuery,
  item: Report,
  pageDescription: "A page of reports",
  read: (agent, query) => agent.listReports(query),
});

reportRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/reports/{scope}",
    summary: "The scope's head report with its freshness (stale by max age or by newer processed wakes)",
    request: { params: AgentIdParam.extend({ scope: ReportScopeParam }) },
    responses: { 200: json(ReportHeadView, "The head report"), 400: problems[400], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id, scope } = c.req.valid("param");
    const result = await agentFor(c.get("principal"), c.env, id, "agents:read").getReportHead(scope);
    if (!result.ok) fail(result);
    return c.json(result.report, 200);
  },
);
