import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { agentStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { idempotent } from "../../http/idempotency";
import { randomId } from "../../ids";
import { RunAccepted } from "../../schema/agents/messages";
import { CreateTimerBody, ListTimersQuery, Timer, TimerParams } from "../../schema/agents/timers";
import { agentCreateRoute, agentDeleteRoute, requireAgentManager } from "./agent-resource-routes";
import { agentListRoute } from "../list-route";
import { IdempotencyHeader, json, problems, security } from "../openapi-helpers";

/** Per-agent timers: GET|POST /v1/agents/:id/timers, DELETE …/:tid, POST …/:tid/trigger. */
export const timerRoutes = createRouter();
timerRoutes.post("/v1/agents/:id/timers", idempotent());
timerRoutes.post("/v1/agents/:id/timers/:tid/trigger", idempotent());

agentCreateRoute(timerRoutes, {
  path: "/v1/agents/{id}/timers",
  summary: "Create a timer (cron in an IANA zone, interval, or once)",
  body: CreateTimerBody,
  item: Timer,
  answer: "The timer",
  things: "timers",
  idPrefix: "tm_",
  create: (c, { tenantId, agentId, body, keyedId }) => agentStub(c.env, tenantId, agentId).createTimer(body, keyedId),
  view: (created) => created.timer,
});

agentListRoute(timerRoutes, {
  path: "/v1/agents/{id}/timers",
  summary: "List timers with their next run and recent scheduler decisions",
  query: ListTimersQuery,
  item: Timer,
  pageDescription: "A page of timers",
  read: (agent, query) => agent.listTimers(query),
});

agentDeleteRoute(timerRoutes, {
  path: "/v1/agents/{id}/timers/{tid}",
  summary: "Delete a timer (tombstoned; it never fires again)",
  params: TimerParams,
  item: Timer,
  answer: "The deleted timer",
  things: "timers",
  remove: (c, { tenantId, param: { id, tid } }) => agentStub(c.env, tenantId, id).deleteTimer(tid),
  view: (deleted) => deleted.timer,
});

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
    requireAgentManager(principal, "timers");
    const { id, tid } = c.req.valid("param");
    const requestId = c.req.header("idempotency-key") ?? randomId("trig_");
    const result = await agentStub(c.env, principal.tenantId, id).triggerTimer(tid, requestId);
    if (!result.ok) fail(result);
    return c.json({ runKey: result.runKey }, 202);
  },
);
