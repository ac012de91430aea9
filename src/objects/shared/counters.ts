import { eq, sql } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { consumeSlidingLog, type SlidingLogDecision, toSlidingLog } from "../../core/governance/sliding-log";
import { counters } from "../../db/common-schema";

type SyncDb = BaseSQLiteDatabase<"sync", unknown, Record<string, unknown>>;

/** A counter's read and upsert, bound once per database: the agent's turn limit and the tenant's report numbering run on every turn (issue 12 §8). */
export function counterStatements(db: SyncDb) {
  let built = statements.get(db);
  if (!built) {
    built = { read: READ(db), write: WRITE(db) };
    statements.set(db, built);
  }
  return built;
}
// The same SQL on the agent's and the tenant's database (one shared table definition).
const READ = (db: SyncDb) => db.select({ state: counters.state }).from(counters).where(eq(counters.key, sql.placeholder("key"))).prepare();
const WRITE = (db: SyncDb) =>
  db
    .insert(counters)
    .values({ key: sql.placeholder("key"), state: sql.placeholder("state") })
    .onConflictDoUpdate({ target: counters.key, set: { state: sql`excluded.${sql.identifier(counters.state.name)}` } })
    .prepare();
const statements = new WeakMap<SyncDb, { read: { get(values: { key: string }): { state: Record<string, unknown> } | undefined }; write: { run(values: { key: string; state: unknown }): unknown } }>();

/**
 * Loads, decides (core) and stores one sliding-window limit inside the calling DO. Exact over any window: a fixed
 * window aligned to the clock lets a burst of 2× the limit through across its edge ("20 turns a minute" would allow 40).
 * `known`: the row's state as the caller last read or wrote it, when the caller is the row's only writer and keeps it
 * (issue 12 §8: no read per turn); `stored` in the answer is the row's state afterwards, for the caller to keep.
 */
export function consumeCounter(
  db: SyncDb,
  key: string,
  limit: number,
  windowMs: number,
  known?: { state: unknown },
  nowMs: number = Date.now(),
): SlidingLogDecision & { stored: unknown } {
  const { read, write } = counterStatements(db);
  const state = known ? known.state : read.get({ key })?.state;
  const decision = consumeSlidingLog(toSlidingLog(state), nowMs, limit, windowMs);
  if (!decision.allowed) return { ...decision, stored: state };
  write.run({ key, state: decision.nextLog });
  return { ...decision, stored: decision.nextLog };
}
