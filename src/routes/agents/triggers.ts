import { createRoute } from "@hono/zod-openapi";
import { fail } from "../../http/api-error";
import { requireApiKey, requireScope, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { AgentIdParam } from "../../schema/common";
import { TriggerBody, TriggerDescriptor, type TriggerAction, type TriggerRecord } from "../../schema/agents/webhooks";
import { IdempotencyHeader, json, problems, security } from "../openapi-helpers";

/** POST /v1/agents/:id/trigger: provision, rotate or revoke the agent's external trigger. */
export const triggerRoutes = createRouter();

/** The public descriptor: the URL (secret included) is built here because only the edge knows the origin. */
export function triggerDescriptor(origin: string, trigger: TriggerRecord): TriggerDescriptor {
  return {
    triggerId: trigger.triggerId,
    url: trigger.token === null ? null : `${origin}/v1/hooks/t/${trigger.triggerId}?token=${trigger.token}`,
    status: trigger.status,
  };
}

triggerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/agents/{id}/trigger",
    summary: "Provision (default), rotate or revoke the agent's external trigger",
    description:
      "`provision` returns the agent's one active descriptor, creating it on first use (201) and returning the same one afterwards (200). `rotate` issues a new trigger id and secret and retires the old URL at once; with an Idempotency-Key a retried rotate answers the first rotation. `revoke` disables the URL.",
    request: {
      params: AgentIdParam,
      headers: IdempotencyHeader,
      body: { content: { "application/json": { schema: TriggerBody } }, required: false },
    },
    responses: {
      200: json(TriggerDescriptor, "The existing (or revoked) descriptor"),
      201: json(TriggerDescriptor, "A new active descriptor"),
      400: problems[400],
      401: problems[401],
      404: problems[404],
    },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:write");
    const action: TriggerAction = (c.req.valid("json") as { action?: TriggerAction }).action ?? "provision";
    // The secret-bearing answer is never kept in the idempotency store; rotate derives its new id from the key instead.
    const requestKey = c.req.header("idempotency-key");
    const result = await tenantStub(c.env, principal.tenantId).manageTrigger(`key:${principal.keyId}`, c.req.valid("param").id, action, requestKey);
    if (!result.ok) fail(result);
    const created = result.changed && result.trigger.status === "active";
    return c.json(triggerDescriptor(new URL(c.req.url).origin, result.trigger), created ? 201 : 200);
  },
);
