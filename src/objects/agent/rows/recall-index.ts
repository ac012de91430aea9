import { sql } from "drizzle-orm";
import type { AgentDb } from "../types";
import { handWritten } from "../../shared/sqlite";

const MARK = handWritten<{ mark: number }>((v) => sql`SELECT coalesce(max("id"), 0) AS "mark" FROM "messages_fts_docsize"`);
// The mark is read first, not in a subquery of the insert: the insert writes the table the mark is read from
// (through the virtual table, where SQLite's planner cannot see it), so the batch's bounds are fixed up front.
const INDEX_ABOVE = handWritten((v) => sql`INSERT INTO "messages_fts"(rowid, "text") SELECT "seq", "text" FROM "messages" WHERE "seq" > ${v.mark} AND "text" IS NOT NULL ORDER BY "seq" LIMIT ${v.limit}`);
const UNINDEXED = handWritten((v) => sql`SELECT 1 AS "one" FROM "messages" WHERE "seq" > ${v.mark} AND "text" IS NOT NULL LIMIT 1`);

/**
 * Recall's FTS5 index, filled lazily (issue 12 §8, session 10; migration 0012): a message insert no longer indexes
 * its text through a trigger (that flushed an FTS segment per commit, ~3× the insert's cost). Messages are indexed in
 * seq order, so the index holds exactly the messages with text up to a high-water mark; the mark is the index's own
 * `messages_fts_docsize` table (one row per indexed message, keyed by seq), so no second record can disagree with it.
 * Every search first indexes what lies above it (`catchUp()` unbounded): recall answers for every message appended
 * before the query, as the trigger did. Compaction indexes bounded batches after it commits, and the retention pass
 * indexes bounded batches on its alarm (continuing soon while more is left), so the backlog a search can meet is
 * bounded by time even for threads that never compact. Erasure's `deleteAll` takes the index and its mark together.
 */
export class RecallIndex {
  private readonly markQuery;
  private readonly indexAbove;
  private readonly unindexedQuery;

  constructor(db: AgentDb) {
    this.markQuery = MARK(db);
    this.indexAbove = INDEX_ABOVE(db);
    this.unindexedQuery = UNINDEXED(db);
  }

  /** The newest indexed seq (0: none); every message with text at or below it is indexed, none above it. */
  mark(): number {
    return Number(this.markQuery.get()?.mark ?? 0);
  }

  /** Indexes up to `limit` unindexed messages, oldest first (all of them without a limit). */
  catchUp(limit = -1): void {
    // SQLite reads a negative LIMIT as none.
    this.indexAbove.all({ mark: this.mark(), limit });
  }

  /** Whether some message with text is still unindexed. */
  lagging(): boolean {
    return this.unindexedQuery.get({ mark: this.mark() }) !== undefined;
  }
}

const indexes = new WeakMap<AgentDb, RecallIndex>();

/** The index of this database, its statements built once (an agent's `db` lives as long as its object). */
export function recallIndex(db: AgentDb): RecallIndex {
  let index = indexes.get(db);
  if (!index) indexes.set(db, (index = new RecallIndex(db)));
  return index;
}
