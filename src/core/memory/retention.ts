import { z } from "zod";

/** Age and row bounds of one append-only log. */
export interface LogBound {
  maxAgeDays: number;
  maxRows: number;
}

/**
 * How long each table that grows with use keeps its rows. History — messages, summaries,
 * runs and their traces, audit, reports — is not here: it is kept until erasure.
 */
export interface RetentionPolicy {
  agentEvents: LogBound;
  tenantEvents: LogBound;
  /** Notification batches (once dispatched), change units and inbound delivery ids: their dedupe window. */
  dedupeWindowDays: number;
  idempotencyHours: number;
  /** Settled outbound webhook deliveries (delivered, dead, blocked). */
  webhookDeliveriesDays: number;
  /** Finished compaction jobs (done, failed_terminal); the summaries they wrote are history and stay. */
  compactionJobsDays: number;
}

const days = z.number().int().min(1).max(3_650);
const logBound = z.object({ maxAgeDays: days.optional(), maxRows: z.number().int().min(1_000).max(100_000_000).optional() }).strict();

/** The tenant policy's `retention` overrides (every field optional; a missing one keeps the default). */
export const retentionOverridesSchema = z
  .object({
    agentEvents: logBound.optional(),
    tenantEvents: logBound.optional(),
    dedupeWindowDays: days.optional(),
    idempotencyHours: z.number().int().min(1).max(24 * 365).optional(),
    webhookDeliveriesDays: days.optional(),
    compactionJobsDays: days.optional(),
  })
  .strict();
export type RetentionOverrides = z.infer<typeof retentionOverridesSchema>;

/** The bounds in force: the defaults, overridden field by field by the tenant's policy. */
export function resolveRetention(defaults: RetentionPolicy, overrides: RetentionOverrides | undefined): RetentionPolicy {
  const o = overrides ?? {};
  return {
    agentEvents: { ...defaults.agentEvents, ...o.agentEvents },
    tenantEvents: { ...defaults.tenantEvents, ...o.tenantEvents },
    dedupeWindowDays: o.dedupeWindowDays ?? defaults.dedupeWindowDays,
    idempotencyHours: o.idempotencyHours ?? defaults.idempotencyHours,
    webhookDeliveriesDays: o.webhookDeliveriesDays ?? defaults.webhookDeliveriesDays,
    compactionJobsDays: o.compactionJobsDays ?? defaults.compactionJobsDays,
  };
}

/** The ISO instant before which a row `ageDays` old is due. */
export function cutoffIso(nowMs: number, ageDays: number): string {
  return new Date(nowMs - ageDays * 86_400_000).toISOString();
}

/**
 * Rows of a log with a monotonic seq up to which the row cap removes: at most `maxRows` seqs stay
 * (seqs are never reused, so the gaps pruning leaves only make the log smaller than the cap).
 */
export function capFloorSeq(headSeq: number, maxRows: number): number {
  return Math.max(0, headSeq - maxRows);
}

/**
 * Whether a replay after `afterSeq` would skip pruned events: every seq up to `prunedThroughSeq` is gone,
 * so a reader who has seen less than that has a gap and must resume from the oldest seq still kept.
 */
export function cursorExpired(afterSeq: number, prunedThroughSeq: number): boolean {
  return afterSeq < prunedThroughSeq;
}

/** The `cursor_expired` failure (410): resume after `oldestSeq - 1`, i.e. from the oldest event still kept. */
export function expiredCursor(prunedThroughSeq: number): { ok: false; code: "cursor_expired"; message: string; oldestSeq: number } {
  const oldestSeq = prunedThroughSeq + 1;
  return { ok: false, code: "cursor_expired", message: `events up to seq ${prunedThroughSeq} were pruned by retention; resume from seq ${oldestSeq} (Last-Event-ID: ${prunedThroughSeq})`, oldestSeq };
}
