import { asc, eq, isNull, max } from "drizzle-orm";
import { buildNotificationBatch, changeUnitKey, type ChangeUnit, type NotificationBatch, changeUnits as units } from "../../../core/wakes/change-units";
import type { TypedToken } from "../../../core/wakes/tokens";
import * as schema from "../../../db/tenant-schema";
import type { Authority } from "../../../schema/agents/messages";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

export interface BatchMeta {
  /** `journal`, `event:<source>`, `webhook:<sourceId>`, `trigger:<triggerId>`, `agent:<agentId>`. */
  source: string;
  authority: Authority;
  /** External evidence carried to the woken agent (events, webhooks); never for local writes. */
  payload?: unknown;
  /** Agent hops from the original cause (config.run.maxCascadeDepth); absent = 0. */
  cascadeDepth?: number;
}

export type RecordedBatch = { batch: NotificationBatch; inserted: boolean };

export interface PendingBatch extends BatchMeta {
  batch: NotificationBatch;
  origin: string;
}

/**
 * Seed 000's change provenance for one tenant. Writers call `recordLocal`/`recordExternal` inside
 * their own transaction, so the record, its change units and its batch commit together; matching
 * and queueing happen afterwards from the `pending` list (a crash in between re-dispatches, and
 * runKey dedupe makes that harmless).
 */
export class NotificationLog {
  /**
   * False only when no batch can be pending that the dispatcher has not seen: set by `record` at the insert
   * itself (the only writer of pending rows), whoever the writer is and whether or not it then reaches its
   * dispatch; cleared by the dispatcher before it reads the pending list (`notePassStarted`), set again for a
   * batch it left pending. Starts true: a new object may find batches a previous lifetime left. In memory
   * only, and never cleared by a write, so a stale value can only cost a pass, never skip one.
   */
  private unseen = true;

  constructor(
    private readonly db: TenantDb,
    private readonly hostId: () => string,
  ) {}

  /** Local writes (API or tool): one change unit per written payload, counters monotonic per tenant. */
  recordLocal(tx: TenantDb, writes: ReadonlyArray<{ payloadType: string; payloadId: string }>, tokens: ReadonlyArray<TypedToken>, meta: BatchMeta): RecordedBatch {
    const last = tx.select({ counter: max(schema.changeUnits.counter) }).from(schema.changeUnits).get()?.counter ?? 0;
    const host = this.hostId();
    const made = writes.map((write, index) => units.local(host, last + 1 + index, write.payloadType, write.payloadId));
    return this.record(tx, made, tokens, meta);
  }

  /** Webhook or event deliveries: the unit is derived from the delivery id, so redelivery yields the same batch. */
  recordExternal(tx: TenantDb, unit: ChangeUnit, tokens: ReadonlyArray<TypedToken>, meta: BatchMeta): RecordedBatch {
    return this.record(tx, [unit], tokens, meta);
  }

  /** Whether a batch may be pending that no dispatch pass has read since (see `unseen`). */
  mayHaveUnseenPending(): boolean {
    return this.unseen;
  }

  /** A dispatch pass is about to read the pending list: every batch recorded so far is in what it reads. */
  notePassStarted(): void {
    this.unseen = false;
  }

  /** A pass left a batch pending (a failed send): the next caller must not skip the pass. */
  notePendingLeft(): void {
    this.unseen = true;
  }

  pending(limit = 50): PendingBatch[] {
    return this.db
      .select()
      .from(schema.notificationBatches)
      .where(isNull(schema.notificationBatches.dispatchedAt))
      .orderBy(asc(schema.notificationBatches.createdAt))
      .limit(limit)
      .all()
      .map((row) => ({
        batch: { logicalChangeKey: row.logicalChangeKey, changeUnitKeys: row.changeUnitKeys, typedTokens: row.tokens as TypedToken[] },
        origin: row.origin,
        source: row.source,
        authority: row.authority as Authority,
        cascadeDepth: row.cascadeDepth,
        payload: row.payload ?? undefined,
      }));
  }

  markDispatched(logicalChangeKey: string, matchedCount: number): void {
    this.db
      .update(schema.notificationBatches)
      .set({ dispatchedAt: nowIso(), matchedCount })
      .where(eq(schema.notificationBatches.logicalChangeKey, logicalChangeKey))
      .run();
  }

  private record(tx: TenantDb, made: ChangeUnit[], tokens: ReadonlyArray<TypedToken>, meta: BatchMeta): RecordedBatch {
    const built = buildNotificationBatch({ changeUnits: made, tokens });
    if (!built.ok) throw Object.assign(new Error(built.message), { code: built.code });
    const { batch } = built;
    const existing = tx.select({ key: schema.notificationBatches.logicalChangeKey }).from(schema.notificationBatches).where(eq(schema.notificationBatches.logicalChangeKey, batch.logicalChangeKey)).get();
    if (existing) return { batch, inserted: false };
    const createdAt = nowIso();
    // Before the insert: a throw after it (or a rollback) leaves the flag set, which only costs a pass.
    this.unseen = true;
    for (const unit of made) {
      if (unit.origin !== "local") continue;
      tx.insert(schema.changeUnits)
        .values({ counter: unit.counter, changeUnitKey: changeUnitKey(unit), logicalChangeKey: batch.logicalChangeKey, origin: unit.origin, hostId: unit.hostId, payloadType: unit.payloadType, payloadId: unit.payloadId, createdAt })
        .run();
    }
    tx.insert(schema.notificationBatches)
      .values({
        logicalChangeKey: batch.logicalChangeKey,
        changeUnitKeys: batch.changeUnitKeys,
        tokens: batch.typedTokens,
        origin: made[0]!.origin,
        source: meta.source,
        authority: meta.authority,
        payload: meta.payload ?? null,
        cascadeDepth: meta.cascadeDepth ?? 0,
        createdAt,
      })
      .run();
    return { batch, inserted: true };
  }
}
