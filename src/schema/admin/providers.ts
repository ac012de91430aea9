import { z } from "@hono/zod-openapi";
import { IsoTimestamp, ResourceId } from "../common";
import { ProviderEndpoint } from "./policy";

const EndpointId = ProviderEndpoint.shape.id.openapi({ description: "A provider endpoint id (`openai`, `anthropic`, `workers-ai`, or an openai-compatible endpoint's name)", example: "openai" });

export const CreateProviderSecretBody = z
  .object({
    provider: EndpointId,
    name: z.string().min(1).max(100).optional(),
    apiKey: z.string().min(1).max(4096).openapi({ description: "Stored encrypted; never returned, logged or shown again" }),
  })
  .strict()
  .openapi("CreateProviderSecretBody");
export type CreateProviderSecretBody = z.infer<typeof CreateProviderSecretBody>;

/** A stored provider key's metadata; reference it from a policy endpoint as `secretRefId`. */
export const ProviderSecret = z
  .object({
    id: z.string().openapi({ description: "The secretRefId", example: "ps_3k9x…" }),
    provider: z.string(),
    name: z.string().nullable(),
    createdAt: IsoTimestamp,
    revokedAt: IsoTimestamp.nullable(),
  })
  .openapi("ProviderSecret");
export type ProviderSecret = z.infer<typeof ProviderSecret>;

export const SecretIdParam = z.object({ id: ResourceId.openapi({ param: { name: "id", in: "path" } }) });

export const CreateConsentBody = z
  .object({
    provider: EndpointId,
    model: z.string().min(1).max(200),
    policyVersion: z.string().min(1).max(64).openapi({ description: "Must equal the endpoint's current policyVersion in the tenant policy" }),
  })
  .strict()
  .openapi("CreateConsentBody");
export type CreateConsentBody = z.infer<typeof CreateConsentBody>;

/** A privacy receipt: the tenant confirmed sending data to this provider model under this provider policy version. */
export const ProviderConsent = z
  .object({
    id: z.string(),
    provider: z.string(),
    model: z.string(),
    policyVersion: z.string(),
    consentedBy: z.string().openapi({ description: "The actor, e.g. `key:<id>`" }),
    createdAt: IsoTimestamp,
  })
  .openapi("ProviderConsent");
export type ProviderConsent = z.infer<typeof ProviderConsent>;
