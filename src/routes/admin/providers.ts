import { ApiError } from "../../http/api-error";
import { createRouter } from "../../http/app";
import { idempotent } from "../../http/idempotency";
import { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret, SecretIdParam } from "../../schema/admin/providers";
import { adminByIdRoutes, adminCreateRoute } from "./admin-resource-routes";
import { adminListRoute } from "../list-route";

/** /v1/providers/secrets and /v1/providers/consents: provider keys (write-only) and privacy receipts (admin API keys only). */
export const providerRoutes = createRouter();

adminCreateRoute(providerRoutes, {
  forbidden: true,
  path: "/v1/providers/secrets",
  summary: "Store a provider API key, encrypted; answers its secretRefId (the key is never shown again)",
  description: "Reference the answer's `id` as `secretRefId` of the policy endpoint whose id is `provider` (or, stored with `provider: \"otlp\"` as `key=value,…` headers, as `telemetry.headersSecretRefId`). An Idempotency-Key replays the same secret's metadata for the same body.",
  body: CreateProviderSecretBody,
  created: ProviderSecret,
  answer: "The stored secret's metadata",
  // The secret id derives from the Idempotency-Key (the generic store keeps a hash of the body, key included).
  create: ({ tenant, actor, body, requestKey }) => tenant.createProviderSecret(actor, body, requestKey),
  view: ({ secret }) => secret,
});

adminListRoute(providerRoutes, {
  path: "/v1/providers/secrets",
  summary: "List stored provider secrets (metadata only, revoked ones included), oldest first",
  item: ProviderSecret,
  pageDescription: "Secret metadata",
  read: (tenant, query) => tenant.listProviderSecrets(query),
});

adminByIdRoutes(providerRoutes, {
  forbidden: true,
  path: "/v1/providers/secrets/{id}",
  params: SecretIdParam,
  item: ProviderSecret,
  delete: {
    summary: "Revoke a provider secret: its ciphertext is erased and endpoints referencing it answer secret_unavailable",
    answer: "The revoked secret's metadata",
    call: (tenant, actor, id) => tenant.revokeProviderSecret(actor, id),
  },
  view: ({ secret }) => secret,
});

providerRoutes.post("/v1/providers/consents", idempotent());

adminCreateRoute(providerRoutes, {
  forbidden: true,
  path: "/v1/providers/consents",
  summary: "Record a privacy receipt for (provider, model, policyVersion); required before the first call and after every policyVersion change",
  description: "`provider` must be a configured endpoint, `model` one of its models and `policyVersion` its current policyVersion. Repeating a consent answers the first receipt.",
  body: CreateConsentBody,
  created: ProviderConsent,
  answer: "The privacy receipt",
  create: async ({ tenant, actor, body }) => {
    const result = await tenant.recordProviderConsent(actor, body);
    // A refused consent names the failing fields (the generic failure carries none).
    if (!result.ok) throw new ApiError(result.code, result.message, result.fields ? { fields: result.fields } : {});
    return result;
  },
  view: ({ consent }) => consent,
});

adminListRoute(providerRoutes, {
  path: "/v1/providers/consents",
  summary: "List privacy receipts, oldest first",
  item: ProviderConsent,
  pageDescription: "Privacy receipts",
  read: (tenant, query) => tenant.listProviderConsents(query),
});
