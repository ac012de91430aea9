import { and, asc, eq, inArray, isNull, ne, sql, type SQL } from "drizzle-orm";
import { journalEntities as table } from "../../../db/tenant-schema";
import type { JournalFilter, JournalFilters, JournalRecord, JournalType } from "../../../schema/agents/journal";
import type { TenantDb } from "../types";
import { createdKey, keysetPage } from "../../shared/keyset";

export type JournalRow = typeof table.$inferSelect;
/** Keyset position of a list page: the last row's (createdAt, id). */
export type ListCursor = { c: string; i: string };

/** Keeps `IN (…)` lists under the SQLite bound-parameter limit of the DO runtime. */
const CHUNK = 90;

/** A row as the API returns it; a derived category lives only in the column, never in `data`. */
export function toRecord(row: JournalRow): JournalRecord {
  const { categoryId: _inColumn, ...fields } = row.data;
  const record: JournalRecord = {
    id: row.id,
    type: row.type as JournalType,
    categoryId: row.categoryId,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    ...fields,
  };
  if (row.deletedAt) record.deletedAt = row.deletedAt;
  return record;
}

const jsonField = (path: string, value: string): SQL => sql`json_extract(${table.data}, ${path}) = ${value}`;

/** How each list filter reads a row: references held as `parentId` use its index. */
const FILTERS: Record<JournalFilter, (value: string) => SQL> = {
  categoryId: (value) => eq(table.categoryId, value),
  taskId: (value) => eq(table.parentId, value),
  checklistId: (value) => eq(table.parentId, value),
  targetId: (value) => eq(table.parentId, value),
  status: (value) => jsonField("$.status", value),
  date: (value) => jsonField("$.date", value),
  targetType: (value) => jsonField("$.targetType", value),
};

/** The generic store over `journal_entities`: every kind, one code path. Tombstoned rows are never "live". */
export class JournalRows {
  constructor(readonly db: TenantDb) {}

  /** Whether any row, live or tombstoned, holds `id` (ids are never reused). */
  exists(id: string): boolean {
    return !!this.db.select({ id: table.id }).from(table).where(eq(table.id, id)).get();
  }

  live(id: string, type?: JournalType): JournalRow | undefined {
    return this.db
      .select()
      .from(table)
      .where(and(eq(table.id, id), isNull(table.deletedAt), type ? eq(table.type, type) : undefined))
      .get();
  }

  /** Live rows by id. */
  liveMany(ids: ReadonlyArray<string>): JournalRow[] {
    return chunks([...new Set(ids)]).flatMap((part) => this.db.select().from(table).where(and(inArray(table.id, part), isNull(table.deletedAt))).all());
  }

  /** The chain of parents above `parentId` (an item's checklist, then its task), nearest first. */
  ancestry(parentId: string | null): string[] {
    const chain: string[] = [];
    for (let id = parentId; id !== null && chain.length < 4; ) {
      chain.push(id);
      id = this.db.select({ parentId: table.parentId }).from(table).where(eq(table.id, id)).get()?.parentId ?? null;
    }
    return chain;
  }

  /** Live rows whose parent is one of `parentIds` (checklists of a task, items of a checklist, ratings of a target, …). */
  liveChildren(parentIds: ReadonlyArray<string>): JournalRow[] {
    return chunks(parentIds).flatMap((part) =>
      this.db.select().from(table).where(and(inArray(table.parentId, part), isNull(table.deletedAt))).orderBy(asc(table.createdAt), asc(table.id)).all(),
    );
  }

  /** The first live row of `type` matching `filters`, other than `exceptId`. */
  findLive(type: JournalType, filters: JournalFilters, exceptId?: string): JournalRow | undefined {
    return this.db
      .select()
      .from(table)
      .where(and(eq(table.type, type), isNull(table.deletedAt), exceptId ? ne(table.id, exceptId) : undefined, ...conditions(filters)))
      .get();
  }

  /** Whether any live record other than the category itself is filed under `categoryId`. */
  categoryInUse(categoryId: string): boolean {
    return !!this.db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.categoryId, categoryId), ne(table.type, "category"), isNull(table.deletedAt)))
      .get();
  }

  /** Oldest first, keyset-paginated on (createdAt, id); `last` is set only when another page exists. */
  list(type: JournalType, filters: JournalFilters, limit: number, after: ListCursor | undefined): { rows: JournalRow[]; last: ListCursor | null } {
    const where = [eq(table.type, type), isNull(table.deletedAt), ...conditions(filters)];
    const page = keysetPage(this.db, { table, sort: table.createdAt, tieBreak: table.id, order: "asc", where, limit, from: after });
    return { rows: page.rows, last: page.last && createdKey(page.last) };
  }

  insert(row: JournalRow): void {
    this.db.insert(table).values(row).run();
  }

  /** Writes a new state of an existing row (the caller has checked its version). */
  replace(row: JournalRow): void {
    const { id, ...values } = row;
    this.db.update(table).set(values).where(eq(table.id, id)).run();
  }
}

function conditions(filters: JournalFilters): SQL[] {
  return (Object.entries(filters) as Array<[JournalFilter, string | undefined]>).flatMap(([name, value]) => (value === undefined ? [] : [FILTERS[name](value)]));
}

function chunks<T>(items: ReadonlyArray<T>): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += CHUNK) out.push(items.slice(start, start + CHUNK));
  return out;
}
