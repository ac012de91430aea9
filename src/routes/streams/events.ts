import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, streamGuardFor, widgetNamespace } from "../../http/auth";
import { createRouter } from "../../http/app";
import { parseEventCursor } from "../../core/runtime/sse";
import { AgentIdParam } from "../../schema/common";
import { problems, security } from "../openapi-helpers";
import { guardStream } from "../../http/stream-guard";
import { asMessageEvents, sseResponse, StreamFormat } from "./sse";

export const eventRoutes = createRouter();

eventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/events",
    summary: "The agent's event log as SSE: replay after Last-Event-ID (or ?after=), then live; a widget token sees only its own sessions' runs",
    request: {
      params: AgentIdParam,
      query: z.object({ ...StreamFormat, after: z.string().optional(), access_token: z.string().optional() }),
      headers: z.object({ "last-event-id": z.string().optional() }),
    },
    responses: {
      200: { content: { "text/event-stream": { schema: z.string() } }, description: "Frames `id: <seq>`, `event: <type>`, `data: <json>`; heartbeat every 15 s" },
      400: problems[400],
      410: { ...problems[404], description: "cursor_expired: events after this cursor were pruned by retention; `oldestSeq` is the oldest still kept (resume with Last-Event-ID = oldestSeq - 1)" },
      404: problems[404],
    },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const raw = c.req.header("last-event-id") ?? c.req.valid("query").after;
    const after = raw === undefined ? 0 : parseEventCursor(raw);
    if (after === undefined) throw new ApiError("validation_failed", "Last-Event-ID / after must be a non-negative integer", { fields: [{ path: "after", message: "must be a non-negative integer" }] });
    const principal = c.get("principal");
    // A widget token follows only its own conversations' runs (docs/decisions.md "Widget session isolation").
    const result = await agentFor(principal, c.env, id, "agents:read").openEvents(after, widgetNamespace(principal));
    if (!result.ok) fail(result);
    // The stream ends (final `stream.closed` event) when its key is revoked or its widget token expires.
    const guarded = guardStream(result.stream, streamGuardFor(c.env, principal));
    return sseResponse(c.req.valid("query").format === "message" ? asMessageEvents(guarded) : guarded) as never;
  },
);
