import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, agentStub, requireApiKey, requireScope } from "../../http/auth";
import { createRouter } from "../../http/app";
import { idempotent } from "../../http/idempotency";
import { randomId } from "../../ids";
import { runKeys, threadIds } from "../../core/ids/run-keys";
import { AgentIdParam } from "../../schema/common";
import { RunAccepted } from "../../schema/agents/messages";
import { Run } from "../../schema/agents/runs";
import { listRoute } from "../list-route";
import { IdempotencyHeader, json, problems, security } from "../openapi-helpers";

export const runRoutes = createRouter();
runRoutes.post("/v1/agents/:id/wake", idempotent());

listRoute(runRoutes, {
  path: "/v1/agents/{id}/runs",
  summary: "The wake-run log, newest first",
  params: AgentIdParam,
  item: Run,
  pageDescription: "A page of runs",
  errors: { 400: problems[400], 403: problems[403], 404: problems[404] },
  read: (c, { param: { id }, query }) => {
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:read");
    // Runs carry every session's inputs and traces: API keys only (docs/decisions/widget-session-isolation.md).
    requireApiKey(principal);
    return agent.listRuns(query);
  },
});

runRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/runs/{runKey}",
    summary: "One run with its trace",
    request: { params: AgentIdParam.extend({ runKey: z.string().regex(/^[0-9a-f]{64}$/, "must be a 64-character hex runKey") }) },
    responses: { 200: json(Run, "The run"), 400: problems[400], 403: problems[403], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id, runKey } = c.req.valid("param");
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:read");
    // Runs carry every session's inputs and traces: API keys only (docs/decisions/widget-session-isolation.md).
    requireApiKey(principal);
    const result = await agent.getRun(runKey);
    if (!result.ok) fail(result);
    return c.json(result.run, 200);
  },
);

runRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/wake",
    summary: "Wake the agent now (reason manual), through the wake queue",
    request: { params: AgentIdParam, headers: IdempotencyHeader },
    responses: { 202: json(RunAccepted, "The wake was queued"), 404: problems[404], 409: problems[409], 423: problems[423] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:write");
    const { id } = c.req.valid("param");
    if (principal.kind === "jwt") throw new ApiError("forbidden", "widget tokens cannot wake agents");
    const agent = await agentStub(c.env, principal.tenantId, id).getAgent();
    if (!agent) throw new ApiError("not_found", "agent not found");
    if (agent.lifecycle !== "active") {
      const code = agent.lifecycle === "destroyed" ? "agent_destroyed" : "agent_dormant";
      throw new ApiError(code, code === "agent_dormant" ? `resume is required: POST /v1/agents/${id}/resume` : "the agent is destroyed");
    }
    // Brakes (helper "brakes"): no new wake while an agent-wide brake covers the agent.
    const brake = await agentStub(c.env, principal.tenantId, id).wakeBrake();
    if (brake) throw new ApiError("brake_engaged", `brake ${brake.brakeId} (${brake.behaviour}) stops new wakes of this agent; release it with POST /v1/brakes/${brake.brakeId}/release`);
    const runKey = runKeys.manual(id, c.req.header("idempotency-key") ?? randomId("wake_"));
    await c.env.WAKE_QUEUE.send({
      tenantId: principal.tenantId,
      agentId: id,
      reason: "manual",
      runKey,
      threadId: threadIds.autonomous(id, runKey),
      authority: "runtime_instruction",
      input: {},
    });
    return c.json({ runKey }, 202);
  },
);
