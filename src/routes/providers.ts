import { createRoute } from "@hono/zod-openapi";
import { ApiError, fail } from "../http/api-error";
import { requireAdminKey, tenantStub } from "../http/auth";
import { createRouter } from "../http/app";
import { idempotent, idempotencyKeyOf } from "../http/idempotency";
import { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret, SecretIdParam } from "../schema/providers";
import { adminListRoute } from "./list-route";
import { adminForbidden, IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** /v1/providers/secrets and /v1/providers/consents: provider keys (write-only) and privacy receipts (admin API keys only). */
export const providerRoutes = createRouter();

providerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/providers/secrets",
    summary: "Store a provider API key, encrypted; answers its secretRefId (the key is never shown again)",
    description: "Reference the answer's `id` as `secretRefId` of the policy endpoint whose id is `provider` (or, stored with `provider: \"otlp\"` as `key=value,…` headers, as `telemetry.headersSecretRefId`). An Idempotency-Key replays the same secret's metadata for the same body.",
    request: { ...jsonBody(CreateProviderSecretBody), headers: IdempotencyHeader },
    responses: { 201: json(ProviderSecret, "The stored secret's metadata"), 400: problems[400], 401: problems[401], 403: adminForbidden, 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    // Not the generic idempotency store (it keeps a hash of the body, key included): the secret id derives from the Idempotency-Key.
    const requestKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const result = await tenantStub(c.env, principal.tenantId).createProviderSecret(`key:${principal.keyId}`, c.req.valid("json"), requestKey);
    if (!result.ok) fail(result);
    return c.json(result.secret, 201);
  },
);

adminListRoute(providerRoutes, {
  path: "/v1/providers/secrets",
  summary: "List stored provider secrets (metadata only, revoked ones included), oldest first",
  item: ProviderSecret,
  pageDescription: "Secret metadata",
  read: (tenant, query) => tenant.listProviderSecrets(query),
});

providerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/providers/secrets/{id}",
    summary: "Revoke a provider secret: its ciphertext is erased and endpoints referencing it answer secret_unavailable",
    request: { params: SecretIdParam },
    responses: { 200: json(ProviderSecret, "The revoked secret's metadata"), 401: problems[401], 403: adminForbidden, 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).revokeProviderSecret(`key:${principal.keyId}`, c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(result.secret, 200);
  },
);

providerRoutes.post("/v1/providers/consents", idempotent());

providerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/providers/consents",
    summary: "Record a privacy receipt for (provider, model, policyVersion); required before the first call and after every policyVersion change",
    description: "`provider` must be a configured endpoint, `model` one of its models and `policyVersion` its current policyVersion. Repeating a consent answers the first receipt.",
    request: { ...jsonBody(CreateConsentBody), headers: IdempotencyHeader },
    responses: { 201: json(ProviderConsent, "The privacy receipt"), 400: problems[400], 401: problems[401], 403: adminForbidden, 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).recordProviderConsent(`key:${principal.keyId}`, c.req.valid("json"));
    if (!result.ok) throw new ApiError(result.code, result.message, result.fields ? { fields: result.fields } : {});
    return c.json(result.consent, 201);
  },
);

adminListRoute(providerRoutes, {
  path: "/v1/providers/consents",
  summary: "List privacy receipts, oldest first",
  item: ProviderConsent,
  pageDescription: "Privacy receipts",
  read: (tenant, query) => tenant.listProviderConsents(query),
});
