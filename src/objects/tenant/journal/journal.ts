import { z } from "zod";
import { config } from "../../../config";
import { failure, type Result } from "../../../http/error-codes";
import { randomId } from "../../../ids";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import { JOURNAL_KINDS, JOURNAL_TYPES, JournalSchemas, type JournalFilters, type JournalRecord, type JournalType } from "../../../schema/journal";
import type { Authority } from "../../../schema/messages";
import { nowIso } from "../../sqlite";
import type { NotificationLog } from "../notification-log";
import type { TenantDb } from "../types";
import { JOURNAL_PAYLOAD_TYPE, KIND_META } from "./kinds";
import { JournalRows, toRecord, type JournalRow } from "./rows";
import { checkDeletable, mergePatch, place, type Fields, type Placement } from "./rules";
import { journalTokens, type JournalWrite } from "./tokens";

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
type Built = Result<{ record: JournalRecord; write: JournalWrite | null }>;

const CursorShape = z.object({ c: z.string(), i: z.string() });

/**
 * The tenant's journal: the source-of-truth records (SPEC §1), kept apart from agents' stores.
 * Each write is one transaction holding the record, any cascaded descendants, their change units
 * and one notification batch; matching and queueing run after commit (`afterCommit`).
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

  create(type: JournalType, input: unknown, meta: JournalWriteMeta = API_WRITE): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    const parsed = parse(JournalSchemas[type].create, input);
    if (!parsed.ok) return Promise.resolve(parsed);
    const id = randomId(KIND_META[type].idPrefix);
    return this.commit(meta, (rows) => {
      const placed = place(rows, type, id, parsed.fields);
      if (!placed.ok) return placed;
      const now = nowIso();
      const { categoryId, parentId, data } = placed.placement;
      const row: JournalRow = { id, type, categoryId, parentId, version: 1, data, createdAt: now, updatedAt: now, deletedAt: null };
      rows.insert(row);
      const after = toRecord(row);
      return { ok: true, record: after, write: { op: "create", before: null, after, cascaded: [], ancestors: rows.ancestry(parentId), changedFields: [] } };
    });
  }

  /** Optimistic: `version` must be the stored one. A patch that changes nothing is not a write. */
  patch(type: JournalType, id: string, input: unknown, meta: JournalWriteMeta = API_WRITE): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    const parsed = parse(JournalSchemas[type].patch, input);
    if (!parsed.ok) return Promise.resolve(parsed);
    const { version, ...changes } = parsed.fields as Fields & { version: number };
    return this.commit(meta, (rows) => {
      const row = rows.live(id, type);
      if (!row) return notFound(type, id);
      if (row.version !== version) return versionConflict(type, row, version);
      const candidate = parse(JournalSchemas[type].create, mergePatch(type, row, changes));
      if (!candidate.ok) return candidate;
      const placed = place(rows, type, id, candidate.fields);
      if (!placed.ok) return placed;
      const changedFields = changedFieldsOf(row, placed.placement);
      if (changedFields.length === 0) return { ok: true, record: toRecord(row), write: null };
      const now = nowIso();
      const { categoryId, parentId, data } = placed.placement;
      const next: JournalRow = { ...row, categoryId, parentId, data, version: row.version + 1, updatedAt: now };
      rows.replace(next);
      // Descendants take their category from this record, so a move re-files the whole subtree.
      const cascaded = categoryId === row.categoryId ? [] : rewriteDescendants(rows, id, (child) => ({ ...child, categoryId, version: child.version + 1, updatedAt: now }));
      const after = toRecord(next);
      const ancestors = [...rows.ancestry(row.parentId), ...rows.ancestry(parentId)];
      return { ok: true, record: after, write: { op: "update", before: toRecord(row), after, cascaded, ancestors, changedFields } };
    });
  }

  /** Soft delete with a version check; descendants (checklists, items, time entries, ratings) are tombstoned with it. */
  delete(type: JournalType, id: string, version: number, meta: JournalWriteMeta = API_WRITE): Promise<JournalResult> {
    if (!isJournalType(type)) return Promise.resolve(unknownType(type));
    if (!Number.isSafeInteger(version) || version < 1) return Promise.resolve(failure("validation_failed", "version must be the record's current version (an integer >= 1)"));
    return this.commit(meta, (rows) => {
      const row = rows.live(id, type);
      if (!row) return notFound(type, id);
      if (row.version !== version) return versionConflict(type, row, version);
      const deletable = checkDeletable(rows, row);
      if (!deletable.ok) return deletable;
      const now = nowIso();
      const tombstone = (entity: JournalRow): JournalRow => ({ ...entity, version: entity.version + 1, updatedAt: now, deletedAt: now });
      const next = tombstone(row);
      rows.replace(next);
      const cascaded = rewriteDescendants(rows, id, tombstone);
      const after = toRecord(next);
      return { ok: true, record: after, write: { op: "delete", before: toRecord(row), after, cascaded, ancestors: rows.ancestry(row.parentId), changedFields: [] } };
    });
  }

  /** One transaction: the write, its change units (one per written record) and its batch; then dispatch. */
  private async commit(meta: JournalWriteMeta, build: (rows: JournalRows) => Built): Promise<JournalResult> {
    const built = this.db.transaction((raw) => {
      const tx = raw as unknown as TenantDb;
      const result = build(new JournalRows(tx));
      if (result.ok && result.write) {
        const written = [result.write.after, ...result.write.cascaded].map((record) => ({ payloadType: JOURNAL_PAYLOAD_TYPE, payloadId: record.id }));
        this.notifications.recordLocal(tx, written, journalTokens(result.write), meta);
      }
      return result;
    });
    if (!built.ok) return built;
    if (built.write) await this.dispatch();
    return { ok: true, record: built.record };
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

/** Rewrites every live descendant (breadth first, parents before children) and returns them as records. */
function rewriteDescendants(rows: JournalRows, rootId: string, change: (row: JournalRow) => JournalRow): JournalRecord[] {
  const written: JournalRecord[] = [];
  for (let frontier = [rootId]; frontier.length > 0; ) {
    const children = rows.liveChildren(frontier);
    for (const child of children) {
      const next = change(child);
      rows.replace(next);
      written.push(toRecord(next));
    }
    frontier = children.map((child) => child.id);
  }
  return written;
}

/** Field names whose stored value differs, plus `categoryId` when the effective category moved. */
function changedFieldsOf(row: JournalRow, placement: Placement): string[] {
  const names = new Set([...Object.keys(row.data), ...Object.keys(placement.data)]);
  names.delete("categoryId");
  const changed = [...names].filter((name) => JSON.stringify(row.data[name]) !== JSON.stringify(placement.data[name]));
  if (row.categoryId !== placement.categoryId) changed.push("categoryId");
  return changed.sort();
}

function parse(schema: z.ZodType, input: unknown): Result<{ fields: Fields }> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, fields: parsed.data as Fields };
  return failure("validation_failed", parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; "));
}

const isJournalType = (type: string): type is JournalType => (JOURNAL_TYPES as readonly string[]).includes(type);
const unknownType = (type: string) => failure("validation_failed", `unknown journal record type ${type}`);
const notFound = (type: JournalType, id: string) => failure("not_found", `${JOURNAL_KINDS[type].noun} ${id} not found`);
const versionConflict = (type: JournalType, row: JournalRow, version: number) =>
  failure("version_conflict", `${JOURNAL_KINDS[type].noun} ${row.id} is at version ${row.version}, not ${version}; re-read it and retry`);
