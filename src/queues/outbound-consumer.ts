import { config } from "../config";
import { checkUrlShape } from "../core/egress";
import { isAccepted } from "../core/outbound-delivery";
import { signVigil } from "../core/webhook-signature";
import type { Env } from "../env";
import { tenantStub } from "../objects/shared/stubs";
import type { AttemptReport, PreparedAttempt } from "../schema/contracts";
import { OutboundJob } from "../schema/outbound-webhooks";
import { logEvent } from "../log";

/** Headers every delivery carries; `Vigil-Delivery-Id` is stable across attempts so receivers can dedupe. */
export const DELIVERY_HEADERS = { signature: "Vigil-Signature", deliveryId: "Vigil-Delivery-Id", eventType: "Vigil-Event-Type", attempt: "Vigil-Attempt" } as const;

/** A consumer crash (the TenantDO unreachable) is retried at this pace; it is not a delivery attempt. */
const CONSUMER_RETRY_SECONDS = 30;

/**
 * OUTBOUND_QUEUE: one message = one attempt of one delivery. The TenantDO says what to send
 * (prepare), this worker signs and POSTs it (https, 10 s timeout, redirects not followed), and the
 * TenantDO records the attempt and decides: ack (delivered, dead) or `retry({delaySeconds})` on its
 * own exponential schedule (config.outboundWebhooks).
 */
export async function consumeOutbound(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const parsed = OutboundJob.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "malformed outbound job dropped", issues: parsed.error.issues.length }));
      message.ack();
      continue;
    }
    const { tenantId, deliveryId } = parsed.data;
    try {
      const tenant = tenantStub(env, tenantId);
      const prepared = await tenant.prepareOutboundAttempt(deliveryId);
      if (prepared.action === "skip") {
        message.ack();
        continue;
      }
      const report = await attempt(prepared, env.VIGIL_FAULTS === "enabled");
      const step = await tenant.recordOutboundAttempt(deliveryId, prepared.attempt, report);
      logEvent("info", "webhook attempt", { tenantId, deliveryId, endpointId: prepared.endpointId, attempt: prepared.attempt, httpStatus: report.httpStatus, error: report.error, next: step.status });
      if (step.status === "retry") message.retry({ delaySeconds: step.delaySeconds });
      else message.ack();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "outbound delivery failed in the consumer", tenantId, deliveryId, error: String(error) }));
      message.retry({ delaySeconds: CONSUMER_RETRY_SECONDS });
    }
  }
}

/** The DLQ backstop: deliveries whose messages kept crashing the consumer are marked dead. */
export async function consumeOutboundDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const parsed = OutboundJob.safeParse(message.body);
    if (parsed.success) {
      try {
        await tenantStub(env, parsed.data.tenantId).deadLetterOutbound(parsed.data.deliveryId);
      } catch (error) {
        console.error(JSON.stringify({ level: "error", msg: "outbound dead letter not recorded", deliveryId: parsed.data.deliveryId, error: String(error) }));
        message.retry();
        continue;
      }
    }
    message.ack();
  }
}

/** One signed POST. Any 2xx is delivered; everything else (3xx included: no redirects) is a failed attempt. */
async function attempt(prepared: Extract<PreparedAttempt, { action: "send" }>, allowLoopbackHttp: boolean): Promise<AttemptReport> {
  const egress = checkUrlShape(prepared.url, allowLoopbackHttp);
  if (!egress.ok) return { ok: false, httpStatus: null, error: "network_denied", durationMs: 0 };
  const signature = await signVigil(prepared.secret, prepared.body, Math.floor(Date.now() / 1000));
  const started = Date.now();
  try {
    const response = await fetch(egress.url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(prepared.timeoutMs || config.outboundWebhooks.timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "Vigil-Webhooks/1",
        [DELIVERY_HEADERS.signature]: signature,
        [DELIVERY_HEADERS.deliveryId]: prepared.deliveryId,
        [DELIVERY_HEADERS.eventType]: prepared.eventType,
        [DELIVERY_HEADERS.attempt]: String(prepared.attempt),
      },
      body: prepared.body,
    });
    // The receiver's answer body is never read or stored.
    await response.body?.cancel().catch(() => undefined);
    const durationMs = Date.now() - started;
    return isAccepted(response.status) ? { ok: true, httpStatus: response.status, error: null, durationMs } : { ok: false, httpStatus: response.status, error: `http_${response.status}`, durationMs };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return { ok: false, httpStatus: null, error: timedOut ? "timeout" : "network_error", durationMs: Date.now() - started };
  }
}
