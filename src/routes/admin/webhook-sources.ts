import { tenantStub, requireAdminKey } from "../../http/auth";
import { createRouter } from "../../http/app";
import { CreatedWebhookSource, CreateWebhookSourceBody, SourceIdParam, WebhookSource, type WebhookSourceRecord } from "../../schema/agents/webhooks";
import { adminByIdRoutes, adminCreateRoute } from "./admin-resource-routes";
import { listRoute } from "../list-route";
import { problems } from "../openapi-helpers";

/** GET|POST|DELETE /v1/webhook-sources: signed inbound webhook sources (scope `admin`: they hold secrets). */
export const webhookSourceRoutes = createRouter();


const withUrl = (origin: string, source: WebhookSourceRecord): WebhookSource => ({ ...source, url: `${origin}/v1/hooks/s/${source.id}` });

adminCreateRoute(webhookSourceRoutes, {
  path: "/v1/webhook-sources",
  summary: "Register a signed webhook source; its secret is returned in this answer only",
  description:
    "`scheme` selects the signature format (vigil `Vigil-Signature: t=…,v1=…`, github `X-Hub-Signature-256`, stripe `Stripe-Signature`). `tokenMapping` turns each delivery into typed tokens: `semanticKey` (constant), `subtypeTokens[{namespace, from}]`, `entityIdFrom`, where `from` is `header:<name>` or `body:<dot.path>`.",
  body: CreateWebhookSourceBody,
  created: CreatedWebhookSource,
  answer: "The source and its secret (shown once)",
  // The source id is derived from the Idempotency-Key (the generic store would keep the secret in plaintext).
  create: ({ tenant, actor, body, requestKey }) => tenant.createWebhookSource(actor, body, requestKey),
  view: ({ source, secret }, c) => ({ ...withUrl(new URL(c.req.url).origin, source), secret }),
});

listRoute(webhookSourceRoutes, {
  path: "/v1/webhook-sources",
  summary: "List webhook sources (never their secrets)",
  item: WebhookSource,
  pageDescription: "A page of sources",
  errors: { 400: problems[400], 401: problems[401] },
  read: (c, { query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhookSources(query),
  view: (sources, c) => sources.map((source) => withUrl(new URL(c.req.url).origin, source)),
});

adminByIdRoutes(webhookSourceRoutes, {
  path: "/v1/webhook-sources/{id}",
  params: SourceIdParam,
  item: WebhookSource,
  get: { summary: "Get a webhook source (never its secret)", answer: "The source", call: (tenant, id) => tenant.getWebhookSource(id) },
  delete: { summary: "Delete a webhook source; its URL stops verifying at once", answer: "The deleted source", call: (tenant, actor, id) => tenant.deleteWebhookSource(actor, id) },
  view: ({ source }, c) => withUrl(new URL(c.req.url).origin, source),
});
