import { and, eq, isNull } from "drizzle-orm";
import type { AttemptReport, PreparedAttempt } from "../../../schema/contracts";
import { config } from "../../../config";
import { H } from "../../../core/ids/hash";
import { buildWebhookPayload } from "../../../core/egress/need-to-know-webhooks";
import { matchesEventType, nextDeliveryStep, retryDelaySeconds, type DeliveryStep, type RetrySchedule } from "../../../core/egress/outbound-delivery";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import type { DeliveryAttempt, DeliveryStatus, OutboundJob, TenantEvent, WebhookDelivery } from "../../../schema/admin/outbound-webhooks";
import { nowIso } from "../../shared/sqlite";
import { createdKey, keysetPage } from "../../shared/keyset";
import type { TenantDb } from "../types";
import type { WebhookEndpoints } from "./webhook-endpoints";

type Row = typeof schema.webhookDeliveries.$inferSelect;

export type { AttemptReport, PreparedAttempt } from "../../../schema/contracts";

export interface OutboundDeps {
  db: TenantDb;
  endpoints: WebhookEndpoints;
  queue: Queue<OutboundJob>;
  tenantId: () => string;
  schedule: RetrySchedule;
  /** Arms the tenant's alarm to re-send deliveries whose queue message could not be sent. */
  retryLater: (delayMs: number) => void;
  audit: (actor: string, action: string, target: string | null, detail: Record<string, unknown>) => void;
}

const QUEUE_BATCH = 100;

/**
 * Outbound webhook deliveries: matched against the tenant event log, one row per
 * (endpoint, event) with the exact body bytes, sent through OUTBOUND_QUEUE, and settled by the
 * attempts the consumer reports: `delivered`, retried with backoff, or `dead` after the limit.
 */
export class OutboundDeliveries {
  private sending: Promise<void> | null = null;
  private sendAgain = false;
  /**
   * False only when no pending delivery can lack its queue message: cleared before each scan, set again by
   * every writer of such a row (`match`, the only one), by a failed send and by anything else the scan throws.
   * Starts true (a restart may find some).
   * A run report of a tenant without deliveries then skips the scan.
   */
  private mayHaveUnqueued = true;

  constructor(private readonly deps: OutboundDeps) {}

  /**
   * Inside the caller's transaction (the one that appended the events): a delivery for every
   * matching endpoint. The payload is projected and guarded here; a guard violation is recorded as
   * a `blocked` delivery and nothing is ever sent for it.
   */
  match(tx: TenantDb, events: readonly TenantEvent[]): number {
    if (events.length === 0) return 0;
    const endpoints = this.deps.endpoints.active();
    let created = 0;
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (!matchesEventType(endpoint.eventTypes, event.type)) continue;
        const id = `wd_${H(endpoint.id, event.seq).slice(0, 32)}`;
        const payload = buildWebhookPayload({ deliveryId: id, type: event.type, createdAt: event.createdAt, eventSeq: event.seq, agentId: event.agentId, runKey: event.runKey, data: event.data });
        const now = nowIso();
        const common = { id, endpointId: endpoint.id, eventSeq: event.seq, agentId: event.agentId, eventType: event.type, attempts: 0, attemptLog: [], createdAt: now, updatedAt: now };
        const row = payload.ok
          ? { ...common, status: "pending", body: payload.body, errorCode: null, queuedAt: null }
          : { ...common, status: "blocked", body: null, errorCode: payload.code, queuedAt: now };
        const inserted = tx.insert(schema.webhookDeliveries).values(row).onConflictDoNothing().returning({ id: schema.webhookDeliveries.id }).all();
        if (inserted.length === 0) continue;
        created++;
        this.mayHaveUnqueued = true;
        if (!payload.ok) {
          // Field names only: the values that would have overshared are never logged.
          this.deps.audit("system", "webhook.delivery_blocked", id, { endpointId: endpoint.id, eventType: event.type, operation: payload.operation, policyVersion: payload.policyVersion, violations: payload.violations });
          console.warn(JSON.stringify({ level: "warn", msg: "webhook delivery blocked", code: payload.code, tenantId: this.deps.tenantId(), deliveryId: id, endpointId: endpoint.id, violations: payload.violations }));
        }
      }
    }
    return created;
  }

  /** Sends a queue message for every pending delivery that has none yet (single-flight; a failure re-arms the alarm). */
  async sendUnqueued(): Promise<void> {
    if (!this.mayHaveUnqueued && !this.sending) return;
    if (this.sending) {
      this.sendAgain = true;
      return this.sending;
    }
    this.sending = (async () => {
      try {
        do {
          this.sendAgain = false;
          await this.sendBatches();
        } while (this.sendAgain);
      } catch (error) {
        // Whatever threw (a read, the queued_at update), rows may still lack their message: never skip the next scan.
        this.mayHaveUnqueued = true;
        throw error;
      }
    })().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  private async sendBatches(): Promise<void> {
    const d = schema.webhookDeliveries;
    this.mayHaveUnqueued = false;
    for (;;) {
      const rows = this.deps.db.select({ id: d.id }).from(d).where(and(isNull(d.queuedAt), eq(d.status, "pending"))).limit(QUEUE_BATCH).all();
      if (rows.length === 0) return;
      try {
        await this.deps.queue.sendBatch(rows.map((row) => ({ body: { tenantId: this.deps.tenantId(), deliveryId: row.id } })));
      } catch (error) {
        console.error(JSON.stringify({ level: "error", msg: "outbound queue send failed", tenantId: this.deps.tenantId(), count: rows.length, error: String(error) }));
        this.mayHaveUnqueued = true;
        this.deps.retryLater(5_000);
        return;
      }
      const now = nowIso();
      for (const row of rows) this.deps.db.update(d).set({ queuedAt: now }).where(eq(d.id, row.id)).run();
      if (rows.length < QUEUE_BATCH) return;
    }
  }

  /** The next attempt of a pending delivery, or `skip` when it is settled (a redelivered message) or its endpoint is gone. */
  async prepare(deliveryId: string): Promise<PreparedAttempt> {
    const row = this.row(deliveryId);
    if (!row) return { action: "skip", status: "unknown" };
    if (row.status !== "pending" || row.body === null) return { action: "skip", status: row.status as DeliveryStatus };
    const target = await this.deps.endpoints.target(row.endpointId);
    if (!target.ok) {
      this.settle(row, "dead", target.message);
      return { action: "skip", status: "dead" };
    }
    const { url, secret } = target.target;
    return { action: "send", deliveryId, endpointId: row.endpointId, url, secret, body: row.body, eventType: row.eventType, attempt: row.attempts + 1, timeoutMs: config.outboundWebhooks.timeoutMs };
  }

  /** Records attempt number `attempt` and decides what comes next. A repeated report changes nothing. */
  record(deliveryId: string, attempt: number, report: AttemptReport): DeliveryStep {
    const row = this.row(deliveryId);
    if (!row) return { status: "dead" };
    if (row.status === "delivered") return { status: "delivered" };
    if (row.status !== "pending") return { status: "dead" };
    if (row.attempts >= attempt) return { status: "retry", delaySeconds: retryDelaySeconds(row.attempts, this.deps.schedule) };
    const outcome = report.ok ? { ok: true as const, status: report.httpStatus ?? 200 } : { ok: false as const, status: report.httpStatus, error: report.error ?? "failed" };
    const step = nextDeliveryStep(attempt, outcome, this.deps.schedule);
    const entry: DeliveryAttempt = {
      attempt,
      at: nowIso(),
      outcome: report.ok ? "delivered" : "failed",
      httpStatus: report.httpStatus,
      error: report.ok ? null : (report.error ?? "failed"),
      durationMs: Math.max(0, Math.round(report.durationMs)),
    };
    const status = step.status === "retry" ? "pending" : step.status;
    this.deps.db
      .update(schema.webhookDeliveries)
      // A settled delivery keeps its log, not its body: the bytes are needed only while attempts remain.
      .set({ attempts: attempt, attemptLog: [...row.attemptLog, entry as unknown as Record<string, unknown>], status, errorCode: report.ok ? null : entry.error, body: status === "pending" ? row.body : null, updatedAt: nowIso() })
      .where(eq(schema.webhookDeliveries.id, deliveryId))
      .run();
    if (step.status === "dead") console.warn(JSON.stringify({ level: "warn", msg: "webhook delivery dead", tenantId: this.deps.tenantId(), deliveryId, endpointId: row.endpointId, attempts: attempt, errorCode: entry.error }));
    return step;
  }

  /** The queue's dead-letter backstop: a delivery whose messages kept crashing the consumer is given up. */
  deadLetter(deliveryId: string): void {
    const row = this.row(deliveryId);
    if (row && row.status === "pending") this.settle(row, "dead", "dead_lettered");
  }

  /** Newest first, keyset-paginated on (createdAt, id). */
  list(endpointId: string, limit: number, before: { c: string; i: string } | undefined): Result<{ data: WebhookDelivery[]; last: { c: string; i: string } | null }> {
    if (!this.deps.endpoints.get(endpointId)) return failure("not_found", "webhook not found");
    const d = schema.webhookDeliveries;
    const { rows, last } = keysetPage(this.deps.db, { table: d, sort: d.createdAt, tieBreak: d.id, order: "desc", where: [eq(d.endpointId, endpointId)], limit, from: before });
    return { ok: true, data: rows.map(toDelivery), last: last && createdKey(last) };
  }

  private settle(row: Row, status: "dead", errorCode: string): void {
    this.deps.db.update(schema.webhookDeliveries).set({ status, errorCode, body: null, updatedAt: nowIso() }).where(eq(schema.webhookDeliveries.id, row.id)).run();
    console.warn(JSON.stringify({ level: "warn", msg: "webhook delivery dead", tenantId: this.deps.tenantId(), deliveryId: row.id, endpointId: row.endpointId, errorCode }));
  }

  private row(id: string): Row | undefined {
    return this.deps.db.select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.id, id)).get();
  }
}

function toDelivery(row: Row): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventSeq: row.eventSeq,
    eventType: row.eventType,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    errorCode: row.errorCode,
    attemptLog: row.attemptLog as unknown as DeliveryAttempt[],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
