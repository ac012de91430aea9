import { and, desc, eq, gt, ne, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";

/**
 * A run context's hot page: the newest `limit` raw messages (summary messages left out) after the thread's
 * compaction pointer, newest first. One statement on `messages_thread_seq`, so flat in history length.
 */
export function hotPageQuery(db: AgentDb, limit: number) {
  const m = schema.messages;
  const tm = schema.threadMemory;
  const threadId = sql.placeholder("threadId");
  const pointer = sql`coalesce((SELECT ${tm.compactedThroughSeq} FROM ${tm} WHERE ${tm.threadId} = ${threadId}), 0)`;
  return db
    .select()
    .from(m)
    .where(and(eq(m.threadId, threadId), ne(m.kind, "summary"), gt(m.seq, pointer)))
    .orderBy(desc(m.seq))
    .limit(Math.trunc(limit))
    .prepare();
}
