import { z } from "zod";
import { config } from "../../../config";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import { JOURNAL_KINDS, type JournalFilters, type JournalRecord, type JournalType } from "../../../schema/agents/journal";
import type { Authority } from "../../../schema/agents/messages";
import type { NotificationLog } from "../alertness";
import type { TenantDb } from "../types";
import { JOURNAL_PAYLOAD_TYPE, KIND_META } from "./kinds";
import { JournalRows, toRecord } from "./rows";
import { isJournalType, JournalWriter, notFound, unknownType, type WriteResult } from "./writer";

/** Who a write's notification batch is attributed to. API writes are the tenant operator's. */
export interface JournalWriteMeta {
  source: string;
  authority: Authority;
}
export const API_WRITE: JournalWriteMeta = { source: "journal", authority: "operator_instruction" };

export interface JournalListQuery {
  limit: number;
  cursor?: string | undefined;
  filters?: JournalFilters;
}

export type JournalResult = Result<{ record: JournalRecord }>;

/** `apply` commits; `dry_run` runs the same work and rolls it back (a preview: nothing is written, nothing dispatched). */
export type TransactMode = "apply" | "dry_run";

const CursorShape = z.object({ c: z.string(), i: z.string() });

/** Unwinds `db.transaction` (rolling it back) while carrying the value the caller answers with. */
class Rollback {
  constructor(readonly result: unknown) {}
}

/**
 * The tenant's journal: the source-of-truth records, kept apart from agents' stores.
 * Each write is one transaction holding the record, any cascaded descendants, their change units
 * and one notification batch; matching and queueing run after commit (`afterCommit`). Several
 * writes that form one change (a tool call) share a transaction and one batch through `transact`.
 */
export class Journal {
  constructor(
    private readonly db: TenantDb,
    private readonly notifications: NotificationLog,
    private readonly afterCommit: () => Promise<void>,
  ) {}

  get(type: JournalType, id: string): JournalResult {
    if (!isJournalType(type)) return unknownType(type);
    const row = new JournalRows(this.db).live(id, type);
    return row ? { ok: true, record: toRecord(row) } : notFound(type, id);
  }

  list(type: JournalType, query: JournalListQuery): Result<Page<JournalRecord>> {
    if (!isJournalType(type)) return unknownType(type);
    const filters = query.filters ?? {};
    const allowed: readonly string[] = JOURNAL_KINDS[type].filters;
    const stray = Object.keys(filters).find((name) => !allowed.includes(name));
    if (stray) return failure("validation_failed", `${JOURNAL_KINDS[type].path} cannot be filtered by ${stray}`);
    const after = decodeCursor(query.cursor, CursorShape);
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const limit = Math.min(Math.max(Math.trunc(query.limit) || config.pagination.defaultLimit, 1), config.pagination.maxLimit);
    const page = new JournalRows(this.db).list(type, filters, limit, after);
    return { ok: true, data: page.rows.map(toRecord), nextCursor: page.last ? encodeCursor(page.last) : null };
  }

  /**
   * `keyedId` (an API create under an Idempotency-Key, see `requestKeyedId`): when a record already holds it, the
   * first attempt wrote it; that record is the answer, with no second write, change unit or batch.
   */
  create(type: JournalType, input: unknown, meta: JournalWriteMeta = API_WRITE, keyedId?: string): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    const id = keyedId ?? randomId(KIND_META[type].idPrefix);
    return this.commitOne(meta, (writer) => {
      if (keyedId === undefined || !writer.rows.exists(id)) return writer.create(type, input, id);
      const row = writer.rows.live(id, type);
      if (!row) return failure("idempotency_conflict", `the ${type} this Idempotency-Key created (${id}) was deleted since; retry with a new Idempotency-Key`);
      return { ok: true, record: toRecord(row), write: null };
    });
  }

  /** Optimistic: `version` must be the stored one. A patch that changes nothing is not a write. */
  patch(type: JournalType, id: string, input: unknown, meta: JournalWriteMeta = API_WRITE): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    return this.commitOne(meta, (writer) => writer.patch(type, id, input));
  }

  /** Soft delete with a version check; descendants (checklists, items, time entries, ratings) are tombstoned with it. */
  delete(type: JournalType, id: string, version: number, meta: JournalWriteMeta = API_WRITE): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    return this.commitOne(meta, (writer) => writer.delete(type, id, version));
  }

  /**
   * Runs `work` in one transaction: its journal writes (through the writer) and its own rows
   * (through `tx`) commit together with one change unit per written record and ONE notification
   * batch for all of them; then the batch is dispatched. A failure value from `work` rolls
   * everything back. `dry_run` always rolls back and answers what `work` answered.
   */
  async transact<R extends { ok: boolean }>(meta: JournalWriteMeta, work: (writer: JournalWriter, tx: TenantDb) => R, mode: TransactMode = "apply"): Promise<R> {
    let wrote = false;
    let result: R;
    try {
      result = this.db.transaction((raw) => {
        const tx = raw as unknown as TenantDb;
        const writer = new JournalWriter(new JournalRows(tx));
        const outcome = work(writer, tx);
        if (!outcome.ok || mode === "dry_run") throw new Rollback(outcome);
        if (writer.writes.length > 0) {
          const written = writer.writtenRecords().map((record) => ({ payloadType: JOURNAL_PAYLOAD_TYPE, payloadId: record.id }));
          this.notifications.recordLocal(tx, written, writer.tokens(), meta);
          wrote = true;
        }
        return outcome;
      });
    } catch (error) {
      if (error instanceof Rollback) return error.result as R;
      throw error;
    }
    if (wrote) await this.dispatch();
    return result;
  }

  /** A read-only view for tools that must not write: the writer throws if asked to. */
  reader(): JournalWriter {
    return new JournalWriter(new JournalRows(this.db), true);
  }

  private commitOne(meta: JournalWriteMeta, write: (writer: JournalWriter) => WriteResult): Promise<JournalResult> {
    return this.transact(meta, (writer): JournalResult => {
      const result = write(writer);
      return result.ok ? { ok: true, record: result.record } : result;
    });
  }

  private async dispatch(): Promise<void> {
    try {
      await this.afterCommit();
    } catch (error) {
      // The write and its batch are committed; the batch stays pending and is dispatched again later.
      console.error(JSON.stringify({ level: "error", msg: "journal dispatch failed", error: String(error) }));
    }
  }
}
