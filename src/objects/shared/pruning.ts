import { eq, sql, type SQL } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { counters } from "../../db/common-schema";

// Any Durable Object database: the tenant and agent schemas differ, the counters table and raw SQL do not.
type Db = DrizzleSqliteDODatabase<any>;

/** What one pruning step removed; `full` means it hit its batch and more may be due. */
export interface PruneStep {
  deleted: number;
  full: boolean;
}

/**
 * Prunes the oldest prefix of a log keyed by a monotonic integer (`seq`): rows at or below `floorSeq` (the row
 * cap) or older than `cutoffIso`. Only a contiguous prefix goes, so every seq up to the recorded mark is gone and
 * nothing above it is (what `cursor_expired` relies on). Reads at most `batch` rows.
 */
export function pruneLogPrefix(db: Db, log: { table: string; seq: string; last?: string; createdAt: string; mark: string }, cutoffIso: string, floorSeq: number, batch: number): PruneStep {
  const t = sql.identifier(log.table);
  const seq = sql.identifier(log.seq);
  // A row may hold several seqs, `seq` through `last`: it goes once its last one is due, and the mark is that one.
  const last = sql.identifier(log.last ?? log.seq);
  const created = sql.identifier(log.createdAt);
  const head = db.all<{ seq: number; last: number; createdAt: string }>(sql`SELECT ${seq} AS seq, ${last} AS last, ${created} AS createdAt FROM ${t} ORDER BY ${seq} LIMIT ${batch}`);
  let through: { seq: number; last: number } | null = null;
  for (const row of head) {
    if (row.last > floorSeq && row.createdAt >= cutoffIso) break;
    through = row;
  }
  if (through === null) return { deleted: 0, full: false };
  const deleted = db.all<{ n: number }>(sql`DELETE FROM ${t} WHERE ${seq} <= ${through.seq} RETURNING 1 AS n`).length;
  writeMark(db, log.mark, Math.max(readMark(db, log.mark), through.last));
  return { deleted, full: deleted === batch };
}

/** Deletes up to `batch` rows matching `due` (an age condition on a table without a monotonic key). */
export function pruneWhere(db: Db, table: string, due: SQL, batch: number): PruneStep {
  const t = sql.identifier(table);
  const deleted = db.all<{ n: number }>(sql`DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE ${due} LIMIT ${batch}) RETURNING 1 AS n`).length;
  return { deleted, full: deleted === batch };
}

/** The highest seq a log has pruned (0 when nothing was): every seq up to it is gone. */
export function readMark(db: Db, key: string): number {
  const row = db.select().from(counters).where(eq(counters.key, key)).get();
  const seq = row?.state.seq;
  return typeof seq === "number" ? seq : 0;
}

function writeMark(db: Db, key: string, seq: number): void {
  const state = { seq };
  db.insert(counters).values({ key, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
}
