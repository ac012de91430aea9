/**
 * Tool-side reads over `journal_entities` that the generic row store does not offer: scoped task
 * pages (newest first) and reference candidates. Category lists bind as one JSON parameter
 * (`json_each`), so a scope of any size stays under the DO's bound-parameter limit.
 */
import { and, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import { journalEntities as t } from "../../db/tenant-schema";
import { createdKey, keysetPage } from "../../objects/shared/keyset";
import type { TaskReferenceCandidate } from "../../core/tools/task-reference";
import type { JournalRow, JournalRows } from "../../objects/tenant/journal";

/** Most recently updated tasks considered by reference resolution. */
export const MAX_REFERENCE_CANDIDATES = 2_000;

const inCategories = (categoryIds: readonly string[]): SQL => sql`${t.categoryId} IN (SELECT value FROM json_each(${JSON.stringify(categoryIds)}))`;
const field = (path: string): SQL => sql`json_extract(${t.data}, ${path})`;
const CLOSED = JSON.stringify(["done", "cancelled"]);

export interface TaskPageQuery {
  categoryIds: readonly string[];
  statuses?: readonly string[] | undefined;
  titleContains?: string | undefined;
  dueBefore?: string | undefined;
  limit: number;
  after?: { c: string; i: string } | undefined;
}

/** Live tasks in the categories, newest first (keyset on createdAt, id); one row past `limit` tells a next page exists. */
export function tasksPage(rows: JournalRows, query: TaskPageQuery): { rows: JournalRow[]; last: { c: string; i: string } | null } {
  if (query.categoryIds.length === 0) return { rows: [], last: null };
  const where: SQL[] = [eq(t.type, "task"), isNull(t.deletedAt), inCategories(query.categoryIds)];
  if (query.statuses?.length) where.push(sql`${field("$.status")} IN (SELECT value FROM json_each(${JSON.stringify(query.statuses)}))`);
  // SQLite's lower() folds ASCII only; folding both sides alike keeps the match consistent.
  if (query.titleContains) where.push(sql`instr(lower(${field("$.title")}), lower(${query.titleContains})) > 0`);
  if (query.dueBefore) where.push(sql`${field("$.dueDate")} <= ${query.dueBefore}`);
  const page = keysetPage(rows.db, { table: t, sort: t.createdAt, tieBreak: t.id, order: "desc", where, limit: query.limit, from: query.after });
  return { rows: page.rows, last: page.last && createdKey(page.last) };
}

/** Reference candidates: the most recently updated live tasks in the categories. */
export function taskCandidates(rows: JournalRows, categoryIds: readonly string[], includeClosed: boolean): TaskReferenceCandidate[] {
  if (categoryIds.length === 0) return [];
  const where: SQL[] = [eq(t.type, "task"), isNull(t.deletedAt), inCategories(categoryIds)];
  if (!includeClosed) where.push(sql`${field("$.status")} NOT IN (SELECT value FROM json_each(${CLOSED}))`);
  return rows.db
    .select({ id: t.id, categoryId: t.categoryId, updatedAt: t.updatedAt, title: field("$.title").mapWith(String), status: field("$.status").mapWith(String) })
    .from(t)
    .where(and(...where))
    .orderBy(desc(t.updatedAt), desc(t.id))
    .limit(MAX_REFERENCE_CANDIDATES)
    .all();
}

/** Live rows of `type`, optionally only those created in [fromIso, toIso). */
export function liveOfType(rows: JournalRows, type: string, createdRange?: { fromIso: string; toIso: string }): JournalRow[] {
  const where: SQL[] = [eq(t.type, type), isNull(t.deletedAt)];
  if (createdRange) where.push(sql`${t.createdAt} >= ${createdRange.fromIso}`, sql`${t.createdAt} < ${createdRange.toIso}`);
  return rows.db.select().from(t).where(and(...where)).orderBy(t.createdAt, t.id).all();
}
