import { tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { CreatedWebhookEndpoint, CreateWebhookBody, WebhookDelivery, WebhookEndpoint, WebhookIdParam } from "../../schema/admin/outbound-webhooks";
import { adminByIdRoutes, adminCreateRoute } from "./admin-resource-routes";
import { listRoute } from "../list-route";
import { problems } from "../openapi-helpers";

/** GET|POST|DELETE /v1/webhooks and the delivery log: outbound webhooks (scope `admin`, API keys only: they hold secrets). */
export const webhookRoutes = createRouter();

adminCreateRoute(webhookRoutes, {
  path: "/v1/webhooks",
  summary: "Register an outbound webhook endpoint; its signing secret is returned in this answer only",
  description:
    "Every matching tenant event (see GET /v1/events/stream) is POSTed to `url` as a NEED_TO_KNOW projection (an allowlist per event type), signed " +
    "`Vigil-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`, with `Vigil-Delivery-Id` (stable across attempts, for dedupe), " +
    "`Vigil-Event-Type` and `Vigil-Attempt`. Any 2xx within 10 s is delivered; anything else is retried with exponential backoff " +
    "(30 s doubling, capped at 1 h, 8 attempts in all), then the delivery is `dead`. Redirects are not followed. The URL must be https.",
  body: CreateWebhookBody,
  created: CreatedWebhookEndpoint,
  answer: "The endpoint and its secret (shown once)",
  // The endpoint id is derived from the Idempotency-Key (the generic store would keep the secret in plaintext).
  create: ({ tenant, actor, body, requestKey }) => tenant.createWebhook(actor, body, requestKey),
  view: ({ endpoint, secret }) => ({ ...endpoint, secret }),
});

listRoute(webhookRoutes, {
  path: "/v1/webhooks",
  summary: "List outbound webhook endpoints (never their secrets)",
  item: WebhookEndpoint,
  pageDescription: "A page of endpoints",
  errors: { 400: problems[400], 401: problems[401] },
  read: (c, { query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhooks(query),
});

adminByIdRoutes(webhookRoutes, {
  path: "/v1/webhooks/{id}",
  params: WebhookIdParam,
  item: WebhookEndpoint,
  get: { summary: "Get an outbound webhook endpoint (never its secret)", answer: "The endpoint", call: (tenant, id) => tenant.getWebhook(id) },
  delete: { summary: "Delete an outbound webhook endpoint; deliveries still pending settle as dead", answer: "The deleted endpoint", call: (tenant, actor, id) => tenant.deleteWebhook(actor, id) },
  view: ({ endpoint }) => endpoint,
});

listRoute(webhookRoutes, {
  path: "/v1/webhooks/{id}/deliveries",
  summary: "The endpoint's delivery log, newest first: status (pending, delivered, dead, blocked) and every attempt",
  params: WebhookIdParam,
  item: WebhookDelivery,
  pageDescription: "A page of deliveries",
  errors: { 400: problems[400], 401: problems[401], 404: problems[404] },
  read: (c, { param, query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhookDeliveries(param.id, query),
});
