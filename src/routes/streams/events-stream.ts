import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, fail } from "../../http/api-error";
import { requireApiKey, requireScope, streamGuardFor, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { parseEventCursor } from "../../core/runtime/sse";
import { problems, security } from "../openapi-helpers";
import { guardStream } from "../../http/stream-guard";
import { asMessageEvents, sseResponse, StreamFormat } from "./sse";

/** GET /v1/events/stream: the tenant-wide event log as SSE (SPEC §8). */
export const eventStreamRoutes = createRouter();

eventStreamRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/events/stream",
    summary: "Every agent's events (and tenant-level ones) as SSE: replay after Last-Event-ID (or ?after=), then live",
    description:
      "Frames `id: <tenant seq>`, `event: <type>`, `data: <TenantEvent json>` (`agentId`, `agentSeq`, `runKey`, `data`), heartbeat every 15 s. " +
      "Agents forward run.*, message.appended, tool.*, decision.*, lifecycle.changed, state.changed and report.published; `text.delta` stays on the agent stream. " +
      "API keys only (a widget token gets 403: it follows its own conversation on /v1/agents/{id}/events). `agentId` narrows the stream to one agent.",
    request: {
      query: z.object({ ...StreamFormat, after: z.string().optional(), agentId: z.string().max(64).optional(), access_token: z.string().optional() }),
      headers: z.object({ "last-event-id": z.string().optional() }),
    },
    responses: {
      200: { content: { "text/event-stream": { schema: z.string() } }, description: "The tenant's event stream" },
      400: problems[400],
      410: { ...problems[404], description: "cursor_expired: events after this cursor were pruned by retention; `oldestSeq` is the oldest still kept (resume with Last-Event-ID = oldestSeq - 1)" },
      401: problems[401],
      403: problems[403],
    },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    // Every visitor's conversation crosses this stream: widget tokens are refused (docs/decisions.md "Widget session isolation").
    requireApiKey(principal);
    const query = c.req.valid("query");
    const raw = c.req.header("last-event-id") ?? query.after;
    const after = raw === undefined ? 0 : parseEventCursor(raw);
    if (after === undefined) throw new ApiError("validation_failed", "Last-Event-ID / after must be a non-negative integer", { fields: [{ path: "after", message: "must be a non-negative integer" }] });
    const agentIds: string[] | null = query.agentId !== undefined ? [query.agentId] : null;
    const result = await tenantStub(c.env, principal.tenantId).openTenantEvents(after, agentIds);
    if (!result.ok) fail(result);
    // The stream ends (final `stream.closed` event) when its key is revoked or its widget token expires.
    const guarded = guardStream(result.stream, streamGuardFor(c.env, principal));
    return sseResponse(c.req.valid("query").format === "message" ? asMessageEvents(guarded) : guarded) as never;
  },
);
