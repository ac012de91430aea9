import { createRoute } from "@hono/zod-openapi";
import { fail } from "../http/api-error";
import { tenantStub, requireAdminKey } from "../http/auth";
import { createRouter } from "../http/app";
import { idempotencyKeyOf } from "../http/idempotency";
import { CreatedWebhookEndpoint, CreateWebhookBody, WebhookDelivery, WebhookEndpoint, WebhookIdParam } from "../schema/outbound-webhooks";
import { listRoute } from "./list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** GET|POST|DELETE /v1/webhooks and the delivery log: outbound webhooks (scope `admin`, API keys only: they hold secrets). */
export const webhookRoutes = createRouter();

webhookRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/webhooks",
    summary: "Register an outbound webhook endpoint; its signing secret is returned in this answer only",
    description:
      "Every matching tenant event (see GET /v1/events/stream) is POSTed to `url` as a NEED_TO_KNOW projection (an allowlist per event type), signed " +
      "`Vigil-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`, with `Vigil-Delivery-Id` (stable across attempts, for dedupe), " +
      "`Vigil-Event-Type` and `Vigil-Attempt`. Any 2xx within 10 s is delivered; anything else is retried with exponential backoff " +
      "(30 s doubling, capped at 1 h, 8 attempts in all), then the delivery is `dead`. Redirects are not followed. The URL must be https.",
    request: { ...jsonBody(CreateWebhookBody), headers: IdempotencyHeader },
    responses: { 201: json(CreatedWebhookEndpoint, "The endpoint and its secret (shown once)"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    // Not the generic idempotency store (it would keep the secret in plaintext): the endpoint id is derived from the key.
    const requestKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const result = await tenantStub(c.env, principal.tenantId).createWebhook(`key:${principal.keyId}`, c.req.valid("json"), requestKey);
    if (!result.ok) fail(result);
    return c.json({ ...result.endpoint, secret: result.secret }, 201);
  },
);

listRoute(webhookRoutes, {
  path: "/v1/webhooks",
  summary: "List outbound webhook endpoints (never their secrets)",
  item: WebhookEndpoint,
  pageDescription: "A page of endpoints",
  errors: { 400: problems[400], 401: problems[401] },
  read: (c, { query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhooks(query),
});

webhookRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/webhooks/{id}",
    summary: "Get an outbound webhook endpoint (never its secret)",
    request: { params: WebhookIdParam },
    responses: { 200: json(WebhookEndpoint, "The endpoint"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).getWebhook(c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(result.endpoint, 200);
  },
);

webhookRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/webhooks/{id}",
    summary: "Delete an outbound webhook endpoint; deliveries still pending settle as dead",
    request: { params: WebhookIdParam },
    responses: { 200: json(WebhookEndpoint, "The deleted endpoint"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).deleteWebhook(`key:${principal.keyId}`, c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(result.endpoint, 200);
  },
);

listRoute(webhookRoutes, {
  path: "/v1/webhooks/{id}/deliveries",
  summary: "The endpoint's delivery log, newest first: status (pending, delivered, dead, blocked) and every attempt",
  params: WebhookIdParam,
  item: WebhookDelivery,
  pageDescription: "A page of deliveries",
  errors: { 400: problems[400], 401: problems[401], 404: problems[404] },
  read: (c, { param, query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhookDeliveries(param.id, query),
});
