import { z } from "@hono/zod-openapi";
import { predicateSchema, type Predicate } from "../../core/wakes/predicate";
import { eligibilitySchema, subscriptionSpecSchema, type Subscription as MatchedSubscription } from "../../core/wakes/subscription-index";
import { typedTokenSchema } from "../../core/wakes/tokens";
import { IsoTimestamp, ResourceId } from "../common";

export type SubscriptionSpec = z.infer<typeof subscriptionSpecSchema>;

export const TypedTokenSchema = typedTokenSchema.openapi("TypedToken");

const PREDICATE_DOC = {
  type: "object" as const,
  description: "Over the changed entity, rooted at its type: {eq|neq: [path, value]}, {in: [path, [values]]}, {exists: path}, {and|or: [predicates]}",
  example: { eq: ["task.categoryId", "gym"] },
};

/**
 * The predicate validated by the core schema. It is declared here as an opaque object because the
 * OpenAPI generator cannot render the recursive core schema (it overflows the stack).
 */
export const PredicateBody = z
  .unknown()
  .superRefine((value, ctx) => {
    const parsed = predicateSchema.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  })
  .transform((value) => value as Predicate)
  .openapi(PREDICATE_DOC);

/**
 * Request body of `POST /v1/agents/:id/subscriptions`: the core rules (tokens any-of 1..32, a
 * bounded predicate, an eligibility window); the TenantDO validates again with the core schema.
 */
export const CreateSubscriptionBody = z
  .strictObject({
    tokens: subscriptionSpecSchema.shape.tokens,
    predicate: PredicateBody.optional(),
    eligibility: eligibilitySchema.optional(),
    sessionId: subscriptionSpecSchema.shape.sessionId.openapi({
      description: "Wakes join this conversation (as a message's sessionId names it) instead of running in a thread of their own: whoever follows that session (e.g. a widget visitor, whose session is derived from the token's sub) sees the run and answers its decisions",
    }),
  })
  .openapi("CreateSubscription", { example: { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }], predicate: { eq: ["task.categoryId", "gym"] } } });

/** A subscription as the API returns it. */
export const SubscriptionSchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    tokens: z.array(TypedTokenSchema),
    predicate: z.unknown().optional().openapi(PREDICATE_DOC),
    eligibility: eligibilitySchema.optional(),
    sessionId: z.string().optional(),
    createdAt: IsoTimestamp,
  })
  .openapi("Subscription");

/**
 * The one subscription type: the fields matching reads (core `Subscription`, declared once there)
 * plus when it was stored. The API schema above must accept it (checked below).
 */
export type Subscription = MatchedSubscription & { createdAt: string };
type AcceptedByApi<T extends z.input<typeof SubscriptionSchema>> = T;
export type _SubscriptionFitsApi = AcceptedByApi<Subscription>;

export const SubscriptionParams = z.object({
  id: ResourceId.openapi({ param: { name: "id", in: "path" } }),
  sid: ResourceId.openapi({ param: { name: "sid", in: "path" } }),
});

/** Largest `payload` of `POST /v1/events`, as UTF-8 JSON. */
export const EVENT_PAYLOAD_MAX_BYTES = 64 * 1024;
/** Upper bound on the whole request body of `POST /v1/events`, checked before parsing. */
export const EVENT_BODY_MAX_BYTES = 96 * 1024;
export const EVENT_MAX_TOKENS = 64;

/** `POST /v1/events`: a change notification from the tenant's own systems. */
export const IngestEventBody = z
  .strictObject({
    source: z.string().min(1).max(128).openapi({ description: "The posting system, chosen by the tenant", example: "gym-app" }),
    deliveryId: z.string().min(1).max(256).openapi({ description: "Unique per delivery of one change; a repeat is a duplicate", example: "evt_0001" }),
    tokens: z.array(typedTokenSchema).min(1, "tokens must list at least one token").max(EVENT_MAX_TOKENS, `tokens must list at most ${EVENT_MAX_TOKENS} tokens`),
    payload: z.unknown().optional().openapi({ description: `Evidence for the woken agents (≤ ${EVENT_PAYLOAD_MAX_BYTES} bytes as JSON); quoted to the model as data, never as instructions` }),
  })
  .openapi("IngestEvent");
export type IngestEventBody = z.infer<typeof IngestEventBody>;

export const EventAccepted = z
  .object({ logicalChangeKey: z.string(), duplicate: z.boolean() })
  .openapi("EventAccepted");
