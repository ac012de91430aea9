import { createRouter } from "../../http/app";
import { requireAgentAccess, requireScope, tenantStub } from "../../http/auth";
import { idempotent } from "../../http/idempotency";
import { AgentIdParam } from "../../schema/common";
import { CreateSubscriptionBody, SubscriptionParams, SubscriptionSchema } from "../../schema/agents/subscriptions";
import { agentCreateRoute, agentDeleteRoute } from "./agent-resource-routes";
import { listRoute } from "../list-route";
import { problems } from "../openapi-helpers";

/** Per-agent subscriptions: GET|POST /v1/agents/:id/subscriptions, DELETE …/:sid. The agent must be in the caller's tenant directory. */
export const subscriptionRoutes = createRouter();
subscriptionRoutes.post("/v1/agents/:id/subscriptions", idempotent());

agentCreateRoute(subscriptionRoutes, {
  path: "/v1/agents/{id}/subscriptions",
  summary: "Subscribe an agent to changes: tokens (any-of), optional predicate and eligibility window",
  body: CreateSubscriptionBody,
  item: SubscriptionSchema,
  answer: "The subscription",
  things: "subscriptions",
  idPrefix: "sub_",
  create: (c, { tenantId, agentId, body, keyedId }) => tenantStub(c.env, tenantId).createSubscription(agentId, body, keyedId),
  view: (created) => created.subscription,
});

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

agentDeleteRoute(subscriptionRoutes, {
  path: "/v1/agents/{id}/subscriptions/{sid}",
  summary: "Delete (tombstone) a subscription and drop its index entries",
  params: SubscriptionParams,
  item: SubscriptionSchema,
  answer: "The deleted subscription",
  things: "subscriptions",
  remove: (c, { tenantId, param: { id, sid } }) => tenantStub(c.env, tenantId).deleteSubscription(id, sid),
  view: (deleted) => deleted.subscription,
});
