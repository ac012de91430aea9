import type { z } from "zod";
import { failure, type Result } from "../../../core/runtime/result";
import { JOURNAL_KINDS, JOURNAL_TYPES, JournalSchemas, type JournalRecord, type JournalType } from "../../../schema/agents/journal";
import type { TypedToken } from "../../../core/wakes/tokens";
import { nowIso } from "../../shared/sqlite";
import { toRecord, type JournalRow, type JournalRows } from "./rows";
import { checkDeletable, mergePatch, place, type Fields, type Placement } from "./rules";
import { journalTokens, type JournalWrite } from "./tokens";

/** One write's outcome: the record as it now stands, and the write (null when nothing changed). */
export type WriteResult = Result<{ record: JournalRecord; write: JournalWrite | null }>;

/**
 * The journal's writes inside a transaction the caller owns (`Journal.transact`): each method
 * validates, places and writes one record (with its cascades) and remembers the write, so the
 * transaction can record all of them as one notification batch. Nothing here opens a transaction
 * or dispatches. A read-only writer refuses to write (a tool that must not write is a bug if it tries).
 */
export class JournalWriter {
  readonly writes: JournalWrite[] = [];

  constructor(
    readonly rows: JournalRows,
    private readonly readOnly = false,
  ) {}

  /** Creates a record of `type` with the caller's `id` (API writes: random; tools: derived). */
  create(type: JournalType, input: unknown, id: string): WriteResult {
    if (!isJournalType(type)) return unknownType(type);
    const parsed = parse(JournalSchemas[type].create, input);
    if (!parsed.ok) return parsed;
    const placed = place(this.rows, type, id, parsed.fields);
    if (!placed.ok) return placed;
    const now = nowIso();
    const { categoryId, parentId, data } = placed.placement;
    const row: JournalRow = { id, type, categoryId, parentId, version: 1, data, createdAt: now, updatedAt: now, deletedAt: null };
    this.guard();
    this.rows.insert(row);
    const after = toRecord(row);
    return this.remember({ op: "create", before: null, after, cascaded: [], ancestors: this.rows.ancestry(parentId), changedFields: [] });
  }

  /** Optimistic: `input.version` must be the stored one. A patch that changes nothing is not a write. */
  patch(type: JournalType, id: string, input: unknown): WriteResult {
    if (!isJournalType(type)) return unknownType(type);
    const parsed = parse(JournalSchemas[type].patch, input);
    if (!parsed.ok) return parsed;
    const { version, ...changes } = parsed.fields as Fields & { version: number };
    const row = this.rows.live(id, type);
    if (!row) return notFound(type, id);
    if (row.version !== version) return versionConflict(type, row, version);
    const candidate = parse(JournalSchemas[type].create, mergePatch(type, row, changes));
    if (!candidate.ok) return candidate;
    const placed = place(this.rows, type, id, candidate.fields);
    if (!placed.ok) return placed;
    const changedFields = changedFieldsOf(row, placed.placement);
    if (changedFields.length === 0) return { ok: true, record: toRecord(row), write: null };
    this.guard();
    const now = nowIso();
    const { categoryId, parentId, data } = placed.placement;
    const next: JournalRow = { ...row, categoryId, parentId, data, version: row.version + 1, updatedAt: now };
    this.rows.replace(next);
    // Descendants take their category from this record, so a move re-files the whole subtree.
    const cascaded = categoryId === row.categoryId ? [] : rewriteDescendants(this.rows, id, (child) => ({ ...child, categoryId, version: child.version + 1, updatedAt: now }));
    const after = toRecord(next);
    const ancestors = [...this.rows.ancestry(row.parentId), ...this.rows.ancestry(parentId)];
    return this.remember({ op: "update", before: toRecord(row), after, cascaded, ancestors, changedFields });
  }

  /** Soft delete with a version check; descendants (checklists, items, time entries, ratings) are tombstoned with it. */
  delete(type: JournalType, id: string, version: number): WriteResult {
    if (!isJournalType(type)) return unknownType(type);
    if (!Number.isSafeInteger(version) || version < 1) return failure("validation_failed", "version must be the record's current version (an integer >= 1)");
    const row = this.rows.live(id, type);
    if (!row) return notFound(type, id);
    if (row.version !== version) return versionConflict(type, row, version);
    const deletable = checkDeletable(this.rows, row);
    if (!deletable.ok) return deletable;
    this.guard();
    const now = nowIso();
    const tombstone = (entity: JournalRow): JournalRow => ({ ...entity, version: entity.version + 1, updatedAt: now, deletedAt: now });
    const next = tombstone(row);
    this.rows.replace(next);
    const cascaded = rewriteDescendants(this.rows, id, tombstone);
    const after = toRecord(next);
    return this.remember({ op: "delete", before: toRecord(row), after, cascaded, ancestors: this.rows.ancestry(row.parentId), changedFields: [] });
  }

  /** The (unnormalized) notification tokens of every write so far. */
  tokens(): TypedToken[] {
    return this.writes.flatMap((write) => journalTokens(write));
  }

  /** One change unit per written record (the named ones and their cascades), in write order. */
  writtenRecords(): JournalRecord[] {
    return this.writes.flatMap((write) => [write.after, ...write.cascaded]);
  }

  private remember(write: JournalWrite): WriteResult {
    this.writes.push(write);
    return { ok: true, record: write.after, write };
  }

  private guard(): void {
    if (this.readOnly) throw new Error("journal writer is read-only: a read tool attempted a write");
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

export const isJournalType = (type: string): type is JournalType => (JOURNAL_TYPES as readonly string[]).includes(type);
export const unknownType = (type: string) => failure("validation_failed", `unknown journal record type ${type}`);
export const notFound = (type: JournalType, id: string) => failure("not_found", `${JOURNAL_KINDS[type].noun} ${id} not found`);
const versionConflict = (type: JournalType, row: JournalRow, version: number) =>
  failure("version_conflict", `${JOURNAL_KINDS[type].noun} ${row.id} is at version ${row.version}, not ${version}; re-read it and retry`);
