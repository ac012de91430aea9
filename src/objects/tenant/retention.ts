import { and, desc, inArray, isNotNull, lt, sql } from "drizzle-orm";
import { config } from "../../config";
import { capFloorSeq, cutoffIso, resolveRetention, type RetentionOverrides, type RetentionPolicy } from "../../core/memory/retention";
import * as schema from "../../db/tenant-schema";
import { pruneLogPrefix, pruneWhere, readMark } from "../shared/pruning";
import type { TenantDb } from "./types";

/** Counters key: every tenant event seq up to this one has been pruned (`cursor_expired` below it). */
export const TENANT_EVENTS_MARK = "retention:tenant-events-through";

const PRUNED_TABLES = ["tenant_events", "change_units", "notification_batches", "inbound_deliveries", "idempotency", "webhook_deliveries"] as const;

export interface TenantPruneOutcome {
  deleted: Record<string, number>;
  /** Some table hit its batch: another pass is due soon. */
  more: boolean;
  /** Anything left that a later pass may prune (an empty tenant needs no alarm). */
  pending: boolean;
}

/**
 * The TenantDO's bounded tables: tenant events by age and row cap; notification batches (once
 * dispatched), change units and inbound delivery ids after their dedupe window; idempotency records; settled
 * webhook deliveries. Runs from the tenant's alarm, at most `config.retention.batchRows` rows per table per pass.
 */
export class TenantRetention {
  constructor(private readonly db: TenantDb) {}

  /** The bounds in force: `config.retention` with the tenant policy's overrides. */
  static policy(overrides: RetentionOverrides | undefined): RetentionPolicy {
    return resolveRetention(config.retention, overrides);
  }

  prune(policy: RetentionPolicy, nowMs: number = Date.now()): TenantPruneOutcome {
    const db = this.db;
    const batch = config.retention.batchRows;
    const dedupeCutoff = cutoffIso(nowMs, policy.dedupeWindowDays);
    const head = db.select({ seq: schema.tenantEvents.seq }).from(schema.tenantEvents).orderBy(desc(schema.tenantEvents.seq)).limit(1).get()?.seq ?? 0;
    const steps = {
      tenantEvents: pruneLogPrefix(
        db,
        { table: "tenant_events", seq: "seq", createdAt: "created_at", mark: TENANT_EVENTS_MARK },
        cutoffIso(nowMs, policy.tenantEvents.maxAgeDays),
        capFloorSeq(head, policy.tenantEvents.maxRows),
        batch,
      ),
      changeUnits: pruneLogPrefix(db, { table: "change_units", seq: "counter", createdAt: "created_at", mark: "retention:change-units-through" }, dedupeCutoff, 0, batch),
      notificationBatches: pruneWhere(db, "notification_batches", and(isNotNull(schema.notificationBatches.dispatchedAt), lt(schema.notificationBatches.createdAt, dedupeCutoff))!, batch),
      inboundDeliveries: pruneWhere(db, "inbound_deliveries", lt(schema.inboundDeliveries.receivedAt, dedupeCutoff), batch),
      idempotency: pruneWhere(db, "idempotency", lt(schema.idempotency.createdAt, new Date(nowMs - policy.idempotencyHours * 3_600_000).toISOString()), batch),
      webhookDeliveries: pruneWhere(
        db,
        "webhook_deliveries",
        and(inArray(schema.webhookDeliveries.status, ["delivered", "dead", "blocked"]), lt(schema.webhookDeliveries.updatedAt, cutoffIso(nowMs, policy.webhookDeliveriesDays)))!,
        batch,
      ),
    };
    const deleted = Object.fromEntries(Object.entries(steps).map(([name, step]) => [name, step.deleted]));
    return { deleted, more: Object.values(steps).some((step) => step.full), pending: this.anythingPrunable() };
  }

  /** The oldest tenant event seq a replay can still start from (everything up to the mark is gone). */
  prunedThrough(): number {
    return readMark(this.db, TENANT_EVENTS_MARK);
  }

  private anythingPrunable(): boolean {
    return PRUNED_TABLES.some((table) => this.db.all(sql`SELECT 1 FROM ${sql.identifier(table)} LIMIT 1`).length > 0);
  }
}
