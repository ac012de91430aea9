import { createRoute } from "@hono/zod-openapi";
import { fail } from "../http/api-error";
import { tenantStub, requireAdminKey } from "../http/auth";
import { createRouter } from "../http/app";
import { idempotencyKeyOf } from "../http/idempotency";
import { CreatedWebhookSource, CreateWebhookSourceBody, SourceIdParam, WebhookSource, type WebhookSourceRecord } from "../schema/webhooks";
import { listRoute } from "./list-route";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** GET|POST|DELETE /v1/webhook-sources: signed inbound webhook sources (scope `admin`: they hold secrets). */
export const webhookSourceRoutes = createRouter();


const withUrl = (origin: string, source: WebhookSourceRecord): WebhookSource => ({ ...source, url: `${origin}/v1/hooks/s/${source.id}` });

webhookSourceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/webhook-sources",
    summary: "Register a signed webhook source; its secret is returned in this answer only",
    description:
      "`scheme` selects the signature format (vigil `Vigil-Signature: t=…,v1=…`, github `X-Hub-Signature-256`, stripe `Stripe-Signature`). `tokenMapping` turns each delivery into typed tokens: `semanticKey` (constant), `subtypeTokens[{namespace, from}]`, `entityIdFrom`, where `from` is `header:<name>` or `body:<dot.path>`.",
    request: { ...jsonBody(CreateWebhookSourceBody), headers: IdempotencyHeader },
    responses: { 201: json(CreatedWebhookSource, "The source and its secret (shown once)"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    // Not the generic idempotency store (it would keep the secret in plaintext): the source id is derived from the key.
    const requestKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const result = await tenantStub(c.env, principal.tenantId).createWebhookSource(`key:${principal.keyId}`, c.req.valid("json"), requestKey);
    if (!result.ok) fail(result);
    return c.json({ ...withUrl(new URL(c.req.url).origin, result.source), secret: result.secret }, 201);
  },
);

listRoute(webhookSourceRoutes, {
  path: "/v1/webhook-sources",
  summary: "List webhook sources (never their secrets)",
  item: WebhookSource,
  pageDescription: "A page of sources",
  errors: { 400: problems[400], 401: problems[401] },
  read: (c, { query }) => tenantStub(c.env, requireAdminKey(c.get("principal")).tenantId).listWebhookSources(query),
  view: (sources, c) => sources.map((source) => withUrl(new URL(c.req.url).origin, source)),
});

webhookSourceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/webhook-sources/{id}",
    summary: "Get a webhook source (never its secret)",
    request: { params: SourceIdParam },
    responses: { 200: json(WebhookSource, "The source"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).getWebhookSource(c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(withUrl(new URL(c.req.url).origin, result.source), 200);
  },
);

webhookSourceRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/webhook-sources/{id}",
    summary: "Delete a webhook source; its URL stops verifying at once",
    request: { params: SourceIdParam },
    responses: { 200: json(WebhookSource, "The deleted source"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).deleteWebhookSource(`key:${principal.keyId}`, c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(withUrl(new URL(c.req.url).origin, result.source), 200);
  },
);
