import { z } from "@hono/zod-openapi";
import { TRIGGER_STATUSES } from "../../core/wakes/external-trigger";
import { tokenMappingSchema } from "../../core/wakes/webhook-mapping";
import { WEBHOOK_SIGNATURE_SCHEMES } from "../../core/egress/webhook-signature";
import { IsoTimestamp } from "../common";

export const TRIGGER_ACTIONS = ["provision", "rotate", "revoke"] as const;
export type TriggerAction = (typeof TRIGGER_ACTIONS)[number];

export const TriggerBody = z
  .object({ action: z.enum(TRIGGER_ACTIONS).default("provision").openapi({ description: "provision (default; returns the active descriptor), rotate, revoke" }) })
  .strict()
  .openapi("TriggerRequest");

/** The agent's external trigger (holon descriptor). `url` carries the secret; null once revoked. */
export const TriggerDescriptor = z
  .object({ triggerId: z.string(), url: z.string().nullable(), status: z.enum(TRIGGER_STATUSES) })
  .openapi("TriggerDescriptor");
export type TriggerDescriptor = z.infer<typeof TriggerDescriptor>;

/** What the TenantDO answers: the route turns `token` into the URL (it knows the public origin). */
export interface TriggerRecord {
  triggerId: string;
  agentId: string;
  status: (typeof TRIGGER_STATUSES)[number];
  /** Derived on demand, never stored; null unless the trigger is active. */
  token: string | null;
}

export const TriggerIdParam = z.object({ triggerId: z.string().max(100).openapi({ param: { name: "triggerId", in: "path" } }) });
export const TriggerTokenQuery = z.object({ token: z.string().max(1000).optional().openapi({ description: "The trigger's secret (part of its URL)" }) });

export const DeliveryAccepted = z.object({ runKey: z.string(), duplicate: z.boolean() }).openapi("TriggerDeliveryAccepted");

export const WEBHOOK_SOURCE_SECRET = { minLength: 16, maxLength: 256 } as const;

export const CreateWebhookSourceBody = z
  .object({
    name: z.string().trim().min(1).max(120),
    scheme: z.enum(WEBHOOK_SIGNATURE_SCHEMES),
    secret: z
      .string()
      .min(WEBHOOK_SOURCE_SECRET.minLength)
      .max(WEBHOOK_SOURCE_SECRET.maxLength)
      .optional()
      .openapi({ description: "The signing secret; generated (and returned once) when absent" }),
    tokenMapping: tokenMappingSchema,
  })
  .strict()
  .openapi("CreateWebhookSource");
export type CreateWebhookSourceBody = z.input<typeof CreateWebhookSourceBody>;

/** A source as listed: never its secret. */
export const WebhookSource = z
  .object({
    id: z.string(),
    name: z.string(),
    scheme: z.enum(WEBHOOK_SIGNATURE_SCHEMES),
    tokenMapping: tokenMappingSchema,
    url: z.string(),
    createdAt: IsoTimestamp,
  })
  .openapi("WebhookSource");
export type WebhookSource = z.infer<typeof WebhookSource>;
export type WebhookSourceRecord = Omit<WebhookSource, "url">;

/** The creation response: the only place the secret is ever shown. */
export const CreatedWebhookSource = WebhookSource.extend({ secret: z.string() }).openapi("CreatedWebhookSource");

export const SourceIdParam = z.object({ id: z.string().max(100).openapi({ param: { name: "id", in: "path" } }) });
export const HookSourceIdParam = z.object({ sourceId: z.string().max(100).openapi({ param: { name: "sourceId", in: "path" } }) });

export const WebhookAccepted = z.object({ logicalChangeKey: z.string(), duplicate: z.boolean() }).openapi("WebhookDeliveryAccepted");

/** A delivery as the route hands it to the TenantDO; `rawBody` is null when it exceeded the cap. */
export interface SourceDelivery {
  sourceId: string;
  headers: Record<string, string>;
  rawBody: Uint8Array | null;
  nowMs: number;
}
