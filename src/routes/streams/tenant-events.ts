import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { ApiError, fail } from "../../http/api-error";
import { createRouter } from "../../http/app";
import { requireApiKey, requireScope, tenantStub } from "../../http/auth";
import type { AppEnv } from "../../http/context";
import { idempotent } from "../../http/idempotency";
import { EVENT_BODY_MAX_BYTES, EVENT_PAYLOAD_MAX_BYTES, EventAccepted, IngestEventBody } from "../../schema/agents/subscriptions";
import { IdempotencyHeader, json, jsonBody, problems, security } from "../openapi-helpers";

/** POST /v1/events: a tenant's own systems post change notifications. */
export const tenantEventRoutes = createRouter();

/** Rejects oversized bodies before they are parsed (declared length first, then the bytes read). */
function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async function eventBodyLimit(c, next) {
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > maxBytes || new TextEncoder().encode(await c.req.text()).length > maxBytes) {
      throw new ApiError("payload_too_large", `the request body must be at most ${maxBytes} bytes`);
    }
    await next();
  };
}

tenantEventRoutes.post("/v1/events", limitBody(EVENT_BODY_MAX_BYTES), idempotent());

tenantEventRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/events",
    summary: "Post a change notification; idempotent by (source, deliveryId)",
    description:
      "Records one notification batch (origin `event`, authority `external_evidence`) and wakes the agents whose subscriptions match. " +
      "A repeated (source, deliveryId) answers 200 with the original logicalChangeKey and `duplicate: true`, with no second effect.",
    request: { ...jsonBody(IngestEventBody), headers: IdempotencyHeader },
    responses: {
      202: json(EventAccepted, "Recorded; matching agents are being woken"),
      200: json(EventAccepted, "A duplicate delivery: nothing new happened"),
      400: problems[400],
      401: problems[401],
      413: { ...problems[400], description: `payload larger than ${EVENT_PAYLOAD_MAX_BYTES} bytes` },
    },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireScope(principal, "journal:write");
    requireApiKey(principal);
    // The payload cap (413) is checked by the tenant, next to the rule it protects.
    const result = await tenantStub(c.env, principal.tenantId).ingestEvent(c.req.valid("json"));
    if (!result.ok) fail(result);
    return c.json({ logicalChangeKey: result.logicalChangeKey, duplicate: result.duplicate }, result.duplicate ? 200 : 202);
  },
);
