import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, fail } from "../http/api-error";
import { requireScope, tenantStub } from "../http/auth";
import { createRouter } from "../http/app";
import { actorOf } from "../http/context";
import { IsoTimestamp, PaginationQuery, ResourceId, page } from "../schema/common";
import { json, jsonBody, problems, security } from "./openapi-helpers";

/** Seed 002 decisions (`decision/option` for ask_user today), tenant-wide. */
export const decisionRoutes = createRouter();

const Decision = z
  .object({
    id: z.string(),
    agentId: z.string(),
    runKey: z.string().nullable(),
    operationId: z.string().nullable(),
    type: z.string().openapi({ example: "decision/option" }),
    status: z.enum(["pending", "resolved", "suspended", "cancelled"]),
    payload: z.record(z.string(), z.unknown()).openapi({ description: "ask_user: {kind, question, options, recommendedOptionId, allowFreeText}" }),
    resolution: z.record(z.string(), z.unknown()).nullable(),
    createdAt: IsoTimestamp,
    resolvedAt: IsoTimestamp.nullable(),
  })
  .openapi("Decision");

const ListDecisionsQuery = PaginationQuery.extend({ status: z.enum(["pending", "resolved", "suspended", "cancelled"]).optional() });

/**
 * Seed 002 `Resolution` (`resolutionType`, `chosenOptionId`, `rationale`, …) plus `answerText`: a free-text answer,
 * only for questions with allowFreeText, only with `choose_option` (alone, or alongside an option as a note).
 */
const ResolveBody = z
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

decisionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/decisions",
    summary: "Decisions waiting on (or answered by) a person, newest first; widget tokens see their agents' only",
    request: { query: ListDecisionsQuery },
    responses: { 200: json(page(Decision), "A page of decisions"), 400: problems[400] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    const query = c.req.valid("query");
    const result = await tenantStub(c.env, principal.tenantId).listDecisions({ ...query, agentIds: principal.kind === "jwt" ? principal.agents : undefined });
    if (!result.ok) fail(result);
    return c.json({ data: result.data as z.infer<typeof Decision>[], nextCursor: result.nextCursor }, 200);
  },
);

decisionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/decisions/{id}/resolve",
    summary: "Answer a decision (choose_option | reject; answerText when the question allows free text); wakes the asking agent",
    request: { params: DecisionIdParam, ...jsonBody(ResolveBody) },
    responses: { 200: json(Decision, "The resolved decision"), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:write");
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const result = await tenantStub(c.env, principal.tenantId).resolveDecision(actorOf(principal), id, body, principal.kind === "jwt" ? principal.agents : undefined);
    if (!result.ok) {
      if (result.code === "validation_failed") throw new ApiError("validation_failed", result.message, { fields: [{ path: result.field, message: result.message }] });
      fail(result);
    }
    return c.json(result.decision as z.infer<typeof Decision>, 200);
  },
);
