import { createRoute, z } from "@hono/zod-openapi";
import { threadIds } from "../../core/ids/run-keys";
import type { Principal } from "../../http/context";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, sessionFor } from "../../http/auth";
import { createRouter } from "../../http/app";
import { idempotent } from "../../http/idempotency";
import { randomId } from "../../ids";
import { AgentIdParam, page, PaginationQuery } from "../../schema/common";
import { ListMessagesQuery, Message, PostMessageBody, RunAccepted } from "../../schema/agents/messages";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";
import { sseResponse } from "../streams/sse";

export const messageRoutes = createRouter();
messageRoutes.post("/v1/agents/:id/messages", idempotent());

messageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/messages",
    summary: "Send a user message; 202 {runKey}, or the run as SSE with Accept: text/event-stream",
    request: { params: AgentIdParam, ...jsonBody(PostMessageBody), headers: IdempotencyHeader },
    responses: {
      202: json(RunAccepted, "The run was queued"),
      200: { content: { "text/event-stream": { schema: z.string() } }, description: "The run's events: text.delta, run.completed" },
      400: problems[400],
      404: problems[404],
      409: { ...problems[409], description: "run_in_progress: doubleTexting reject and a run of the session is in flight" },
      423: problems[423],
      429: problems[429],
    },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const stream = (c.req.header("accept") ?? "").includes("text/event-stream");
    // The turn id is the Idempotency-Key when given, so a retried POST maps to the same runKey.
    const turnId = c.req.header("idempotency-key") ?? randomId("turn_");
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:write");
    // A widget token speaks only in its own sessions (docs/decisions.md "Widget session isolation").
    const sessionId = sessionFor(principal, body.sessionId);
    const result = await agent.submitTurn({
      text: body.text,
      sessionId,
      turnId,
      credential: principal.kind,
      stream,
      doubleTexting: body.doubleTexting,
    });
    if (!result.ok) {
      if (result.code === "rate_limited") throw new ApiError("rate_limited", result.message, { retryAfterSeconds: result.retryAfterSeconds ?? 60 });
      fail(result);
    }
    if (stream && result.stream) return sseResponse(result.stream, { "x-vigil-run-key": result.runKey }) as never;
    return c.json({ runKey: result.runKey }, 202);
  },
);

messageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/messages",
    summary: "Message history, newest first",
    request: { params: AgentIdParam, query: PaginationQuery.merge(ListMessagesQuery) },
    responses: {
      200: {
        ...json(page(Message), "A page of messages"),
        headers: z.object({
          "x-vigil-event-seq": z.string().openapi({ description: "The event-log seq this page is consistent with: open /events with Last-Event-ID set to it to follow on without gap or duplicate" }),
        }),
      },
      400: problems[400],
      404: problems[404],
    },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:read");
    const threadId = principal.kind === "jwt" ? widgetThread(principal, id, query) : query.threadId ?? (query.sessionId ? threadIds.interactive(id, query.sessionId) : undefined);
    const result = await agent.listMessages({ limit: query.limit, cursor: query.cursor, threadId });
    if (!result.ok) fail(result);
    return c.json({ data: result.data, nextCursor: result.nextCursor }, 200, { "x-vigil-event-seq": String(result.eventSeq) });
  },
);

/** A widget token reads one of its own threads only: never the agent's other conversations (404 looks like absence). */
export function widgetThread(principal: Principal, agentId: string, query: { threadId?: string | undefined; sessionId?: string | undefined }): string {
  const own = threadIds.interactive(agentId, sessionFor(principal, query.sessionId));
  if (query.threadId !== undefined && query.threadId !== own) {
    const prefix = `${agentId}:session:`;
    if (!query.threadId.startsWith(prefix)) throw new ApiError("not_found", "thread not found");
    return threadIds.interactive(agentId, sessionFor(principal, query.threadId.slice(prefix.length)));
  }
  return own;
}
