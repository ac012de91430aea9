import { z } from "@hono/zod-openapi";
import { validateEventTypeFilter } from "../../core/egress/outbound-delivery";
import { WEBHOOK_EVENT_TYPES } from "../../core/egress/need-to-know-webhooks";
import { IsoTimestamp } from "../common";

const EventTypeFilter = z
  .string()
  .max(64)
  .superRefine((value, ctx) => {
    const problem = validateEventTypeFilter(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const CreateWebhookBody = z
  .object({
    url: z.string().min(1).max(2048).openapi({ description: "https URL the deliveries are POSTed to (no redirects are followed)" }),
    eventTypes: z
      .array(EventTypeFilter)
      .min(1)
      .max(32)
      .openapi({ description: `Filters: \`*\`, an event type (${WEBHOOK_EVENT_TYPES.join(", ")}) or a prefix such as \`run.*\`` }),
    description: z.string().trim().max(500).optional(),
  })
  .strict()
  .openapi("CreateWebhook");
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

/** An endpoint as listed: never its secret. */
export const WebhookEndpoint = z
  .object({ id: z.string(), url: z.string(), eventTypes: z.array(z.string()), description: z.string().nullable(), createdAt: IsoTimestamp })
  .openapi("WebhookEndpoint");
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const CreatedWebhookEndpoint = WebhookEndpoint.extend({
  secret: z.string().openapi({ description: "Signing secret for Vigil-Signature (HMAC-SHA256 over `t.body`); shown in this answer only" }),
}).openapi("CreatedWebhookEndpoint");

export const DELIVERY_STATUSES = ["pending", "delivered", "dead", "blocked"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    at: IsoTimestamp,
    outcome: z.enum(["delivered", "failed"]),
    httpStatus: z.number().int().nullable(),
    error: z.string().nullable(),
    durationMs: z.number().int(),
  })
  .openapi("WebhookDeliveryAttempt");
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

export const WebhookDelivery = z
  .object({
    id: z.string().openapi({ description: "Also sent as the Vigil-Delivery-Id header, the same on every attempt (receivers dedupe on it)" }),
    endpointId: z.string(),
    eventSeq: z.number().int().openapi({ description: "The event's seq in the tenant stream (GET /v1/events/stream)" }),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    errorCode: z.string().nullable().openapi({ description: "Why a delivery is dead or blocked (e.g. overshared_payload_blocked, http_500, timeout)" }),
    attemptLog: z.array(DeliveryAttempt),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
  })
  .openapi("WebhookDelivery");
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookIdParam = z.object({ id: z.string().max(100).openapi({ param: { name: "id", in: "path" } }) });

/** The outbound queue message: which delivery to attempt (everything else is read from the TenantDO). */
export const OutboundJob = z.object({ tenantId: z.string().min(1), deliveryId: z.string().min(1) });
export type OutboundJob = z.infer<typeof OutboundJob>;

/** One entry of the tenant-wide event log, as `GET /v1/events/stream` frames it. */
export const TenantEvent = z
  .object({
    seq: z.number().int(),
    type: z.string(),
    agentId: z.string().nullable(),
    agentSeq: z.number().int().nullable().openapi({ description: "The event's seq in its agent's own log; null for tenant-level events" }),
    runKey: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
    createdAt: IsoTimestamp,
  })
  .openapi("TenantEvent");
export type TenantEvent = z.infer<typeof TenantEvent>;
