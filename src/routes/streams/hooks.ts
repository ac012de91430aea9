import { createRoute } from "@hono/zod-openapi";
import { config } from "../../config";
import { hashTriggerToken, tenantIdOfTriggerId, triggerDeliveryId, triggerWake } from "../../core/wakes/external-trigger";
import { parseInboundBody } from "../../core/wakes/webhook-mapping";
import { ApiError, fail } from "../../http/api-error";
import { agentStub, tenantStub } from "../../http/auth";
import { createRouter } from "../../http/app";
import { readRawBody } from "../../http/raw-body";
import { credentialFingerprint, recentlyRefused, refuse, tenantExists } from "../../http/tenant-gate";
import { tenantIdOfSourceId } from "../../objects/tenant/alertness";
import { Problem } from "../../schema/common";
import { DeliveryAccepted, HookSourceIdParam, TriggerIdParam, TriggerTokenQuery, WebhookAccepted } from "../../schema/agents/webhooks";
import { json, problems } from "../openapi-helpers";

/** Unauthenticated ingress verified by secret or signature: POST /v1/hooks/t/:triggerId, POST /v1/hooks/s/:sourceId. */
export const hookRoutes = createRouter();

const ingressProblems = {
  400: problems[400],
  401: problems[401],
  410: { content: { "application/problem+json": { schema: Problem } }, description: "The agent is destroyed" },
  413: { content: { "application/problem+json": { schema: Problem } }, description: `Body larger than ${config.ingress.maxBodyBytes} bytes` },
} as const;

const tooLarge = () => new ApiError("payload_too_large", `the body may be at most ${config.ingress.maxBodyBytes} bytes`);

hookRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/hooks/t/{triggerId}",
    summary: "External trigger ingress: wakes the agent with the body as external evidence",
    description:
      "The secret comes from the trigger URL (`?token=`) or the `X-Vigil-Trigger-Token` header. The delivery id is `Idempotency-Key`, else `X-Vigil-Delivery`, else the SHA-256 of the raw body; a repeated id is acknowledged with `duplicate: true` and never runs twice.",
    request: { params: TriggerIdParam, query: TriggerTokenQuery },
    responses: { 202: json(DeliveryAccepted, "The wake was queued (or was already)"), ...ingressProblems },
  }),
  async (c) => {
    const { triggerId } = c.req.valid("param");
    const token = c.req.valid("query").token ?? c.req.header("x-vigil-trigger-token");
    const tenantId = tenantIdOfTriggerId(triggerId);
    const headers = c.req.raw.headers;
    const badTrigger = () => new ApiError("unauthorized", "the trigger URL is not valid or was revoked");
    if (!tenantId || !token) return refuse(c.env, headers, badTrigger());
    const fingerprint = credentialFingerprint(`${triggerId}|${token}`);
    if (recentlyRefused(fingerprint) || !(await tenantExists(c.env, tenantId))) return refuse(c.env, headers, badTrigger(), fingerprint);
    const raw = await readRawBody(c.req.raw, config.ingress.maxBodyBytes);
    const deliveryId = raw === null ? null : triggerDeliveryId(c.req.raw.headers, raw);
    // One tenant call verifies the secret (and records the delivery when it is usable), so a bad
    // secret answers 401 before any complaint about the body.
    const admitted = await tenantStub(c.env, tenantId).admitTriggerDelivery(triggerId, hashTriggerToken(token), deliveryId?.ok ? deliveryId.deliveryId : null);
    if (!admitted.ok && admitted.code === "unauthorized") return refuse(c.env, headers, badTrigger(), fingerprint);
    if (!admitted.ok) fail(admitted);
    if (raw === null) throw tooLarge();
    if (!deliveryId?.ok) throw new ApiError("validation_failed", deliveryId?.message ?? "invalid delivery id");
    const wake = triggerWake({
      tenantId,
      agentId: admitted.agentId,
      triggerId,
      deliveryId: deliveryId.deliveryId,
      logicalChangeKey: admitted.logicalChangeKey!,
      data: parseInboundBody(raw, c.req.header("content-type") ?? null),
    });
    const outcome = await agentStub(c.env, tenantId, admitted.agentId).enqueueWake(wake);
    if (!outcome.ok) fail(outcome);
    return c.json({ runKey: wake.runKey, duplicate: outcome.status === "duplicate" }, 202);
  },
);

hookRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/hooks/s/{sourceId}",
    summary: "Signed webhook source ingress (vigil, github or stripe signatures over the raw body)",
    description:
      "The signature is checked over the raw bytes before anything is parsed (replay window 300 s for timestamped schemes). The delivery id is `X-GitHub-Delivery` (github), the event `id` (stripe) or `X-Vigil-Delivery` / `Idempotency-Key` / SHA-256 of the body (vigil); a repeated id is acknowledged with `duplicate: true`.",
    request: { params: HookSourceIdParam },
    responses: { 202: json(WebhookAccepted, "The delivery was recorded (or was already)"), ...ingressProblems },
  }),
  async (c) => {
    const { sourceId } = c.req.valid("param");
    const tenantId = tenantIdOfSourceId(sourceId);
    const unverified = () => new ApiError("signature_invalid", "the delivery's signature could not be verified");
    if (!tenantId || !(await tenantExists(c.env, tenantId))) return refuse(c.env, c.req.raw.headers, unverified());
    const rawBody = await readRawBody(c.req.raw, config.ingress.maxBodyBytes);
    const result = await tenantStub(c.env, tenantId).receiveWebhook({
      sourceId,
      headers: Object.fromEntries(c.req.raw.headers),
      rawBody,
      nowMs: Date.now(),
    });
    if (!result.ok) {
      if (result.code === "payload_too_large") throw tooLarge();
      if (result.code === "signature_invalid") return refuse(c.env, c.req.raw.headers, unverified());
      fail(result);
    }
    return c.json({ logicalChangeKey: result.logicalChangeKey, duplicate: result.duplicate }, 202);
  },
);
