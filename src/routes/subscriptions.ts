import { createRoute } from "@hono/zod-openapi";
import { ApiError, fail } from "../http/api-error";
import { createRouter } from "../http/app";
import { requireAgentAccess, requireScope, tenantStub } from "../http/auth";
import type { Principal } from "../http/context";
import { idempotent, requestKeyedId } from "../http/idempotency";
import { AgentIdParam } from "../schema/common";
import { CreateSubscriptionBody, SubscriptionParams, SubscriptionSchema } from "../schema/subscriptions";
import { listRoute } from "./list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** Per-agent subscriptions: GET|POST /v1/agents/:id/subscriptions, DELETE …/:sid. The agent must be in the caller's tenant directory. */
export const subscriptionRoutes = createRouter();
subscriptionRoutes.post("/v1/agents/:id/subscriptions", idempotent());

function requireManager(principal: Principal): void {
  requireScope(principal, "agents:write");
  if (principal.kind === "jwt") throw new ApiError("forbidden", "widget tokens cannot manage subscriptions");
}

subscriptionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/subscriptions",
    summary: "Subscribe an agent to changes: tokens (any-of), optional predicate and eligibility window",
    request: { params: AgentIdParam, ...jsonBody(CreateSubscriptionBody), headers: IdempotencyHeader },
    responses: { 201: json(SubscriptionSchema, "The subscription"), 400: problems[400], 404: problems[404], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireManager(principal);
    const body = c.req.valid("json");
    const result = await tenantStub(c.env, principal.tenantId).createSubscription(c.req.valid("param").id, body, requestKeyedId(c, principal.tenantId, "sub_", body));
    if (!result.ok) fail(result);
    return c.json(result.subscription, 201);
  },
);

listRoute(subscriptionRoutes, {
  path: "/v1/agents/{id}/subscriptions",
  summary: "The agent's active subscriptions, oldest first",
  params: AgentIdParam,
  item: SubscriptionSchema,
  pageDescription: "A page of subscriptions",
  errors: { 400: problems[400], 404: problems[404] },
  read: (c, { param: { id }, query }) => {
    const principal = c.get("principal");
    requireScope(principal, "agents:read");
    requireAgentAccess(principal, id);
    return tenantStub(c.env, principal.tenantId).listSubscriptions(id, { limit: query.limit, cursor: query.cursor });
  },
});

subscriptionRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/agents/{id}/subscriptions/{sid}",
    summary: "Delete (tombstone) a subscription and drop its index entries",
    request: { params: SubscriptionParams },
    responses: { 200: json(SubscriptionSchema, "The deleted subscription"), 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireManager(principal);
    const { id, sid } = c.req.valid("param");
    const result = await tenantStub(c.env, principal.tenantId).deleteSubscription(id, sid);
    if (!result.ok) fail(result);
    return c.json(result.subscription, 200);
  },
);
