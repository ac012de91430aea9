import { createRoute, z } from "@hono/zod-openapi";
import { requireScope, tenantStub, widgetNamespace } from "../../http/auth";
import { createRouter } from "../../http/app";
import { resolveDecisionAs } from "./decision-resolution";
import { IsoTimestamp, PaginationQuery, ResourceId } from "../../schema/common";
import { listRoute } from "../list-route";
import { json, jsonBody, problems, security } from "../openapi-helpers";

/** Seed 002 decisions, tenant-wide: `decision/tool_approval` (a mutating tool call waiting for a person) and `decision/option` (ask_user). */
export const decisionRoutes = createRouter();

const Decision = z
  .object({
    id: z.string(),
    agentId: z.string(),
    runKey: z.string().nullable(),
    operationId: z.string().nullable(),
    type: z.string().openapi({ example: "decision/option" }),
    status: z.enum(["pending", "resolved", "suspended", "cancelled"]),
    payload: z.record(z.string(), z.unknown()).openapi({
      description:
        "ask_user: {kind, question, options, recommendedOptionId, allowFreeText}; tool_approval: {kind, toolName, riskLevel, argsPreview, argsFields [{key, label, value}], severity, confidence, blastRadius, affectsMultipleWorkstreams, recommendation, escalation, controlMode, timeoutPolicy, tickMs, dueByTick, dueAtMs, extensionsUsed, timedOut, threadId}",
    }),
    resolution: z.record(z.string(), z.unknown()).nullable(),
    createdAt: IsoTimestamp,
    resolvedAt: IsoTimestamp.nullable(),
  })
  .openapi("Decision");

export const ListDecisionsQuery = PaginationQuery.extend({
  status: z.enum(["pending", "resolved", "suspended", "cancelled"]).optional(),
  agentId: ResourceId.optional(),
  type: z.enum(["decision/tool_approval", "decision/option"]).optional(),
});

/**
 * Seed 002 `Resolution` (`resolutionType`, `chosenOptionId`, `rationale`, …) plus `answerText`: a free-text answer,
 * only for questions with allowFreeText, only with `choose_option` (alone, or alongside an option as a note).
 */
export const ResolveBody = z
  .object({
    resolutionType: z.enum(["approve", "reject", "modify", "choose_option"]),
    chosenOptionId: z.string().min(1).optional(),
    modifiedArgs: z.record(z.string(), z.unknown()).optional(),
    alwaysApprove: z.boolean().optional(),
    rationale: z.string().max(4_000).optional(),
    actionKind: z.enum(["create", "update", "delete", "review", "deploy"]).optional(),
    answerText: z.string().trim().min(1).max(4_000).optional(),
  })
  .strict()
  .openapi("DecisionResolution");

const DecisionIdParam = z.object({ id: ResourceId.openapi({ param: { name: "id", in: "path" } }) });

listRoute(decisionRoutes, {
  path: "/v1/decisions",
  summary: "Decisions waiting on (or answered by) a person, newest first; widget tokens see only their own conversations' decisions",
  query: ListDecisionsQuery,
  item: Decision,
  pageDescription: "A page of decisions",
  errors: { 400: problems[400] },
  read: (c, { query }) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    return tenantStub(c.env, principal.tenantId).listDecisions({ ...query, agentIds: principal.kind === "jwt" ? principal.agents : undefined, widgetNamespace: widgetNamespace(principal) });
  },
  view: (rows) => rows as z.infer<typeof Decision>[],
});

decisionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/decisions/{id}/resolve",
    summary:
      "Answer a decision: tool_approval takes approve (alwaysApprove: later calls of that tool in the thread skip approval) | modify (modifiedArgs, re-validated against the tool's input schema) | reject; option takes choose_option | reject (answerText when the question allows free text). Wakes the waiting saga or the asking agent",
    request: { params: DecisionIdParam, ...jsonBody(ResolveBody) },
    responses: { 200: json(Decision, "The resolved decision"), 400: problems[400], 403: problems[403], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const decision = await resolveDecisionAs(c.env, c.get("principal"), c.req.valid("param").id, c.req.valid("json"));
    return c.json(decision as z.infer<typeof Decision>, 200);
  },
);
