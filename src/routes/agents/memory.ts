import { createRoute, z } from "@hono/zod-openapi";
import { SLOT_KEYS } from "../../core/memory/slots";
import { ApiError, fail } from "../../http/api-error";
import { agentFor, agentStub, requireApiKey, requireScope, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { actorOf } from "../../http/context";
import { AgentIdParam } from "../../schema/common";
import { idempotent } from "../../http/idempotency";
import { agentReadRoute } from "./agent-resource-routes";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

export const memoryRoutes = createRouter();
memoryRoutes.post("/v1/agents/:id/memory/compaction/retry", idempotent());

const Slots = z
  .object({
    primaryGoal: z.string().nullable(),
    primaryGoalVersion: z.int(),
    activeTaskId: z.string().nullable(),
    activeTaskIdVersion: z.int(),
    openLoopIds: z.array(z.string()),
    openLoopIdsVersion: z.int(),
    preferenceByKey: z.record(z.string(), z.string()),
    preferenceByKeyVersion: z.int(),
    extension: z.record(z.string(), z.unknown()),
    extensionVersion: z.int(),
  })
  .openapi("AgentSlots");
const CompactionView = z
  .object({
    pending: z.int(),
    running: z.int(),
    done: z.int(),
    failedTerminal: z.int(),
    latestSummaryMessageId: z.string().nullable().openapi({ description: "AgentState.latestSummaryMessageId: moves only forward, only after a summary commits" }),
    diagnostics: z.int().openapi({ description: "divergent duplicate summaries recorded (first commit kept)" }),
  })
  .openapi("CompactionStatus");
const MemoryView = z.object({ slots: Slots, counts: z.object({ messages: z.int(), summaries: z.int() }), compaction: CompactionView }).openapi("AgentMemory");
const SlotWriteBody = z.object({
  value: z.unknown().openapi({ description: "the slot's new value, shaped as the slot requires (null clears primaryGoal / activeTaskId)" }),
  expectedVersion: z.int().min(0).optional().openapi({ description: "409 version_conflict unless the slot is still at this version" }),
});
const SlotWriteResult = z.object({ slot: z.enum(SLOT_KEYS), version: z.int(), changed: z.boolean() }).openapi("SlotWriteResult");
const RecallHit = z
  .object({ messageId: z.string(), kind: z.string(), threadId: z.string(), snippet: z.string(), rank: z.number().openapi({ description: "bm25; lower is better" }), createdAt: z.string() })
  .openapi("RecallHit");
const SearchQuery = z.object({ q: z.string().max(500).optional(), limit: z.coerce.number().int().min(1).max(50).default(20) });

agentReadRoute(memoryRoutes, {
  path: "/v1/agents/{id}/memory",
  summary: "The agent's core memory slots (with per-slot versions) and history counts",
  item: MemoryView,
  answer: "Slots and counts",
  read: (agent) => agent.getMemory(),
  view: ({ memory }) => memory as z.infer<typeof MemoryView>,
});

memoryRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/agents/{id}/memory/slots/{key}",
    summary: "Replace one slot's value (optimistic concurrency with expectedVersion); API keys only",
    request: { params: AgentIdParam.extend({ key: z.string().max(64).openapi({ param: { name: "key", in: "path" } }) }), ...jsonBody(SlotWriteBody) },
    responses: { 200: json(SlotWriteResult, "The slot's version after the write"), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:write");
    requireApiKey(principal);
    const { id, key } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.value === undefined) throw new ApiError("validation_failed", "value is required", { fields: [{ path: "value", message: "required" }] });
    const result = await agentStub(c.env, principal.tenantId, id).updateSlot(key, body.value, body.expectedVersion);
    if (!result.ok) {
      if ("issues" in result) throw new ApiError("invalid_slot", result.message, { fields: result.issues.map((issue) => ({ path: issue.path ? `value.${issue.path}` : "value", message: issue.message })) });
      fail(result);
    }
    return c.json({ slot: result.slot, version: result.version, changed: result.changed }, 200);
  },
);

memoryRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/memory/search",
    summary: "Full-text recall over the agent's messages and summaries, best (bm25) first",
    request: { params: AgentIdParam, query: SearchQuery },
    responses: { 200: json(z.object({ data: z.array(RecallHit), nextCursor: z.null() }), "Ranked hits"), 400: problems[400], 403: problems[403], 404: problems[404] },
    security,
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { q, limit } = c.req.valid("query");
    if (!q || !q.trim()) throw new ApiError("validation_failed", "q is required", { fields: [{ path: "q", message: "must not be empty" }] });
    const principal = c.get("principal");
    const agent = agentFor(principal, c.env, id, "agents:read");
    // Recall spans every session's messages: API keys only (docs/decisions/widget-session-isolation.md).
    requireApiKey(principal);
    const result = await agent.searchMemory(q, limit);
    if (!result.ok) {
      if (result.code === "validation_failed") throw new ApiError("validation_failed", result.message, { fields: [{ path: "q", message: result.message }] });
      fail(result);
    }
    return c.json({ data: result.hits, nextCursor: null }, 200);
  },
);

memoryRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/agents/{id}/export",
    summary: "Everything the agent holds as one JSON document, streamed page by page; API keys only, audited",
    request: { params: AgentIdParam },
    responses: { 200: { content: { "application/json": { schema: z.object({}).passthrough() } }, description: "agent, state, messages, runs, wakeInbox, events, actions, timers, schedulerDecisions, reports, reportHeads, summaries, compactionJobs, threadMemory, memoryDiagnostics, sessions" }, 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    requireApiKey(principal);
    const { id } = c.req.valid("param");
    const result = await agentStub(c.env, principal.tenantId, id).exportData();
    if (!result.ok) fail(result);
    await tenantStub(c.env, principal.tenantId).audit(actorOf(principal), "agent.exported", id, {});
    return new Response(result.stream, { status: 200, headers: { "content-type": "application/json", "content-disposition": `attachment; filename="agent-${id}.json"`, "cache-control": "no-store" } }) as never;
  },
);

memoryRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/memory/compaction/retry",
    summary: "Requeue the agent's failed_terminal compaction jobs with a fresh attempt budget; they run in the background; API keys only",
    request: { params: AgentIdParam, headers: IdempotencyHeader },
    responses: { 202: json(z.object({ requeued: z.int() }).openapi("CompactionRetry"), "How many jobs were requeued (0: none had failed)"), 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:write");
    requireApiKey(principal);
    const result = await agentStub(c.env, principal.tenantId, c.req.valid("param").id).retryCompaction();
    if (!result.ok) fail(result);
    return c.json({ requeued: result.requeued }, 202);
  },
);
