import { config } from "../config";
import { deploymentMode, type DeploymentMode } from "../core/egress/deployment-mode";
import { isAccepted } from "../core/egress/outbound-delivery";
import { signVigil } from "../core/egress/webhook-signature";
import type { Env } from "../env";
import { tenantStub } from "../objects/shared/stubs";
import type { AttemptReport, PreparedAttempt } from "../schema/contracts";
import { OutboundJob } from "../schema/admin/outbound-webhooks";
import { logEvent } from "../log";
import { sendThroughDoor } from "../egress";

/** Headers every delivery carries; `Vigil-Delivery-Id` is stable across attempts so receivers can dedupe. */
export const DELIVERY_HEADERS = { signature: "Vigil-Signature", deliveryId: "Vigil-Delivery-Id", eventType: "Vigil-Event-Type", attempt: "Vigil-Attempt" } as const;

/** A consumer crash (the TenantDO unreachable) is retried at this pace; it is not a delivery attempt. */
const CONSUMER_RETRY_SECONDS = 30;

/**
 * OUTBOUND_QUEUE: one message = one attempt of one delivery. The TenantDO says what to send
 * (prepare), this worker signs and POSTs it through the egress door (10 s timeout, redirects not followed), and the
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
      const report = await attempt(prepared, deploymentMode(env.VIGIL_MODE));
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

/**
 * One signed POST through the egress door, to the endpoint's registered host only. Any 2xx is
 * delivered; everything else (3xx included: a POST never follows a redirect) is a failed attempt,
 * recorded on the delivery with its status and duration.
 */
async function attempt(prepared: Extract<PreparedAttempt, { action: "send" }>, mode: DeploymentMode): Promise<AttemptReport> {
  const host = hostOf(prepared.url);
  const signature = await signVigil(prepared.secret, prepared.body, Math.floor(Date.now() / 1000));
  const started = Date.now();
  try {
    const sent = await sendThroughDoor({
      url: prepared.url,
      purpose: "outbound_webhook",
      allowedHosts: host ? [host] : [],
      mode,
      init: {
        method: "POST",
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
      },
    });
    if (!sent.ok) return { ok: false, httpStatus: null, error: "network_denied", durationMs: Date.now() - started };
    const response = sent.response;
    // The receiver's answer body is never read or stored.
    await response.body?.cancel().catch(() => undefined);
    const durationMs = Date.now() - started;
    return isAccepted(response.status) ? { ok: true, httpStatus: response.status, error: null, durationMs } : { ok: false, httpStatus: response.status, error: `http_${response.status}`, durationMs };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return { ok: false, httpStatus: null, error: timedOut ? "timeout" : "network_error", durationMs: Date.now() - started };
  }
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
