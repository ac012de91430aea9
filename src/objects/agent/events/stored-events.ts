import { and, asc, desc, eq, gt, gte, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";
import { AGENT_EVENTS_MARK } from "./retention";

/** One event as the log stores it (its data in the stored form: ./event-refs.ts hydrates it). */
export interface StoredEvent {
  seq: number;
  type: string;
  runKey: string | null;
  data: Record<string, unknown>;
  createdAt: string;
}

/** At most this many events share a row (a long tool run starts new rows). */
const EVENTS_PER_ROW = 64;

type Row = typeof schema.events.$inferSelect;

/** A row's events, under the consecutive seqs starting at the row's seq. */
export function eventsOfRow(row: Row): StoredEvent[] {
  return row.items.map(([type, createdAt, data], i) => ({ seq: row.seq + i, type, runKey: row.runKey, data, createdAt }));
}

/**
 * Stores one event and returns its seq: it extends the newest row when that row is the same run's (one statement),
 * else it starts a row after the newest row's last seq or the retention mark, whichever is higher, so no seq is given
 * twice.
 */
export function insertEvent(db: AgentDb, type: string, runKey: string | null, data: string, createdAt: string): number {
  const item = sql`json_array(${type}, ${createdAt}, json(${data}))`;
  const extended = db.get<{ seq: number } | undefined>(sql`UPDATE events SET last_seq = last_seq + 1, items = json_insert(items, '$[#]', ${item})
    WHERE seq = (SELECT max(seq) FROM events) AND run_key IS ${runKey} AND last_seq - seq < ${EVENTS_PER_ROW - 1} RETURNING last_seq AS seq`);
  if (extended) return extended.seq;
  const next = sql`max(coalesce((SELECT last_seq FROM events ORDER BY seq DESC LIMIT 1), 0),
    coalesce((SELECT "state" ->> '$.seq' FROM counters WHERE "key" = ${AGENT_EVENTS_MARK}), 0)) + 1`;
  return db.get<{ seq: number }>(sql`INSERT INTO events (seq, last_seq, run_key, items, created_at)
    SELECT n, n, ${runKey}, json_array(${item}), ${createdAt} FROM (SELECT ${next} AS n) RETURNING seq`).seq;
}

/** The newest stored seq (0 for an empty log). */
export function headSeq(db: AgentDb): number {
  return db.select({ seq: schema.events.lastSeq }).from(schema.events).orderBy(desc(schema.events.seq)).limit(1).get()?.seq ?? 0;
}

/**
 * Up to `limit` stored events after `after`, in seq order (`runKey`: that run's only, through its index). Reads rows
 * until it has `limit` events or none are left.
 */
export function storedEventsAfter(db: AgentDb, after: number, limit: number, runKey?: string): StoredEvent[] {
  const e = schema.events;
  const found: StoredEvent[] = [];
  let cursor = after;
  for (;;) {
    // The row holding `cursor` (its seq at or below it) may hold events after it too.
    const from = sql`coalesce((SELECT max(${e.seq}) FROM ${e} WHERE ${e.seq} <= ${cursor}), 0)`;
    const where = runKey === undefined ? gte(e.seq, from) : and(eq(e.runKey, runKey), gt(e.lastSeq, cursor));
    const rows = db.select().from(e).where(where).orderBy(asc(e.seq)).limit(limit).all();
    for (const row of rows) for (const event of eventsOfRow(row)) if (event.seq > cursor && found.length < limit) found.push(event);
    if (found.length >= limit || rows.length < limit) return found;
    // Every event of these rows after the cursor was taken: the next rows follow the last one.
    cursor = rows.at(-1)!.lastSeq;
  }
}
