import { createRoute } from "@hono/zod-openapi";
import { ApiError, fail } from "../http/api-error";
import { agentFor, agentStub, requireScope } from "../http/auth";
import type { Principal } from "../http/context";
import { createRouter } from "../http/app";
import { idempotent, requestKeyedId } from "../http/idempotency";
import { randomId } from "../ids";
import { AgentIdParam } from "../schema/common";
import { RunAccepted } from "../schema/messages";
import { CreateTimerBody, ListTimersQuery, Timer, TimerParams } from "../schema/timers";
import { listRoute } from "./list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** Per-agent timers: GET|POST /v1/agents/:id/timers, DELETE …/:tid, POST …/:tid/trigger. */
export const timerRoutes = createRouter();
timerRoutes.post("/v1/agents/:id/timers", idempotent());
timerRoutes.post("/v1/agents/:id/timers/:tid/trigger", idempotent());

function requireTimerWriter(principal: Principal): void {
  requireScope(principal, "agents:write");
  if (principal.kind === "jwt") throw new ApiError("forbidden", "widget tokens cannot manage timers");
}

timerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/timers",
    summary: "Create a timer (cron in an IANA zone, interval, or once)",
    request: { params: AgentIdParam, ...jsonBody(CreateTimerBody), headers: IdempotencyHeader },
    responses: { 201: json(Timer, "The timer"), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireTimerWriter(principal);
    const body = c.req.valid("json");
    const result = await agentStub(c.env, principal.tenantId, c.req.valid("param").id).createTimer(body, requestKeyedId(c, principal.tenantId, "tm_", body));
    if (!result.ok) fail(result);
    return c.json(result.timer, 201);
  },
);

listRoute(timerRoutes, {
  path: "/v1/agents/{id}/timers",
  summary: "List timers with their next run and recent scheduler decisions",
  params: AgentIdParam,
  query: ListTimersQuery,
  item: Timer,
  pageDescription: "A page of timers",
  errors: { 400: problems[400], 404: problems[404] },
  read: (c, { param: { id }, query }) => agentFor(c.get("principal"), c.env, id, "agents:read").listTimers(query),
});

timerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/agents/{id}/timers/{tid}",
    summary: "Delete a timer (tombstoned; it never fires again)",
    request: { params: TimerParams },
    responses: { 200: json(Timer, "The deleted timer"), 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireTimerWriter(principal);
    const { id, tid } = c.req.valid("param");
    const result = await agentStub(c.env, principal.tenantId, id).deleteTimer(tid);
    if (!result.ok) fail(result);
    return c.json(result.timer, 200);
  },
);

timerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/timers/{tid}/trigger",
    summary: "Run a timer now (reason manual); its schedule is unchanged",
    request: { params: TimerParams, headers: IdempotencyHeader },
    responses: { 202: json(RunAccepted, "The wake was queued"), 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireTimerWriter(principal);
    const { id, tid } = c.req.valid("param");
    const requestId = c.req.header("idempotency-key") ?? randomId("trig_");
    const result = await agentStub(c.env, principal.tenantId, id).triggerTimer(tid, requestId);
    if (!result.ok) fail(result);
    return c.json({ runKey: result.runKey }, 202);
  },
);
