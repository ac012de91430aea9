import { sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { rawRowsStatement } from "../../shared/statements/lean-query";
import type { AgentDb } from "../types";
import { PREVIOUS_IN_THREAD, SAME_RUN_AS_PREVIOUS } from "./message-row";

type StoredMessageRow = typeof schema.messages.$inferSelect;

/**
 * The page's columns, in the order `decodePageRow` reads them. A hand-written decoder (session 9): the generic one
 * called each column's drizzle decoder per cell (440 calls a page); drizzle decodes these columns as the identity,
 * except the two json ones (`JSON.parse`), which is what this does.
 */
export const PAGE_COLUMNS = ["seq", "id", "thread_id", "kind", "text", "content", "prev_message_id", "run_key", "authority", "metadata", "created_at"] as const;

/** A row as the page's statement returns it, from the values `History.append` stored (content and metadata as their stored JSON). */
export function pageRowOf(row: { seq: number; id: string; threadId: string; kind: string; text: string | null; content: string | null; prevMessageId: string | null; runKey: string | null; authority: string | null; metadata: string; createdAt: string }): SqlStorageValue[] {
  return [row.seq, row.id, row.threadId, row.kind, row.text, row.content, row.prevMessageId, row.runKey, row.authority, row.metadata, row.createdAt];
}

/** Positions in `PAGE_COLUMNS` the resolution uses. */
const SEQ = 0;
const ID = 1;
const PREV = 6;
const RUN_KEY = 7;

/** A page row (stored values, links resolved) as drizzle would decode it; a fresh object each call. */
export function decodePageRow(r: SqlStorageValue[]): StoredMessageRow {
  return {
    seq: r[0] as number,
    id: r[1] as string,
    threadId: r[2] as string,
    kind: r[3] as string,
    text: r[4] as string | null,
    content: r[5] === null ? null : (JSON.parse(r[5] as string) as unknown),
    prevMessageId: r[6] as string | null,
    runKey: r[7] as string | null,
    authority: r[8] as string | null,
    metadata: JSON.parse(r[9] as string) as Record<string, unknown>,
    createdAt: r[10] as string,
  };
}

/**
 * A run context's hot page in ONE statement (issue 12 §8, session 8): the thread's compaction pointer, the newest
 * `limit` raw messages after it (summary messages left out), and what resolving their stored `''` needs — until
 * session 7 four statements (pointer, page, summaries between, a probe before the page).
 *
 * Resolution (issue 12 §6, message-row.ts): a row's previous message is the next row of the page unless a summary
 * message lies between them (summary messages are exactly the `summaries` rows, which record their seq and thread), so
 * the summary messages in the page's seq range (returned as JSON on the newest row; read from `messages_thread_seq` over
 * the page's span, so flat in history — the `summaries` index had only the thread to seek on, session 9) and the message before the page's oldest
 * row (on that row, only when it stores `''`) resolve the whole page. Summary messages carry no run key, and a message
 * after one stores its run key in full (`History.append`), so a `''` run key always refers to a page row.
 */
export class HotPageQuery {
  private readonly statement;

  /** The page's row limit as the statement carries it (the context budget's `maxHotMessages`); the memory copy keys a kept page by it. */
  readonly limit: number;

  constructor(db: AgentDb, limit: number) {
    this.limit = Math.trunc(limit);
    const t = sql.placeholder("threadId");
    const columnList = PAGE_COLUMNS.map((name) => `"${name}"`).join(", ");
    const pageColumns = PAGE_COLUMNS.map((name) => `"page"."${name}"`).join(", ");
    this.statement = rawRowsStatement(
      db,
      sql`WITH "page" AS MATERIALIZED (
            SELECT ${sql.raw(columnList)} FROM "messages"
            WHERE "thread_id" = ${t} AND "kind" != 'summary'
              AND "seq" > coalesce((SELECT "compacted_through_seq" FROM "thread_memory" WHERE "thread_id" = ${t}), 0)
            ORDER BY "seq" DESC LIMIT ${sql.raw(String(this.limit))}),
          "ends" AS (SELECT min("seq") AS "lo", max("seq") AS "hi" FROM "page")
          SELECT ${sql.raw(pageColumns)},
            CASE WHEN "page"."seq" = "ends"."hi" AND "ends"."lo" < "ends"."hi" THEN
              (SELECT json_group_array(json_array("s"."id", "s"."seq")) FROM "messages" "s"
               WHERE "s"."thread_id" = ${t} AND "s"."seq" > "ends"."lo" AND "s"."seq" < "ends"."hi" AND "s"."kind" = 'summary') END AS "__between",
            CASE WHEN "page"."seq" = "ends"."lo" AND ("page"."prev_message_id" = '' OR "page"."run_key" = '') THEN
              (SELECT json_array("p"."id", "p"."run_key") FROM "messages" "p"
               WHERE "p"."thread_id" = ${t} AND "p"."seq" < "page"."seq" ORDER BY "p"."seq" DESC LIMIT 1) END AS "__before"
          FROM "page", "ends" ORDER BY "page"."seq" DESC`,
    );
  }

  /** The page, newest first, each row decoded as drizzle would and with `prevMessageId` and `runKey` resolved. */
  read(threadId: string): StoredMessageRow[] {
    return this.readRows(threadId).map(decodePageRow);
  }

  /**
   * The page, newest first, as stored values (`PAGE_COLUMNS` order) with `prev_message_id` and `run_key` resolved:
   * what the memory copy keeps (memory/memory-copy.ts); `decodePageRow` makes each a row.
   */
  readRows(threadId: string): SqlStorageValue[][] {
    const raw = this.statement.all({ threadId });
    if (raw.length === 0) return [];
    if (!raw.some((row) => row[PREV] === PREVIOUS_IN_THREAD || row[RUN_KEY] === SAME_RUN_AS_PREVIOUS)) return raw;
    // The two extra columns follow the message's.
    const width = PAGE_COLUMNS.length;
    const between = raw[0]![width];
    const summaries = typeof between === "string" ? (JSON.parse(between) as [string, number][]).map(([id, seq]) => ({ id, seq })) : [];
    const beforeRaw = raw[raw.length - 1]![width + 1];
    const before = typeof beforeRaw === "string" ? (JSON.parse(beforeRaw) as [string, string | null]) : null;
    // Resolved newest first and in place (the rows were just read here): a row's `older` neighbour is read before
    // it is itself resolved, so every comparison below sees stored values, as when each row was copied.
    for (let i = 0; i < raw.length; i++) {
      const row = raw[i]!;
      if (row[PREV] !== PREVIOUS_IN_THREAD && row[RUN_KEY] !== SAME_RUN_AS_PREVIOUS) continue;
      const older = raw[i + 1];
      const seq = row[SEQ] as number;
      let summary: { id: string; seq: number } | undefined;
      if (older) for (const s of summaries) if (s.seq > (older[SEQ] as number) && s.seq < seq && (!summary || s.seq > summary.seq)) summary = s;
      // Stored run keys here are never '' for what a '' refers to (see above); the probe only past the page's end.
      const previous = summary ? { id: summary.id, runKey: null } : older ? { id: older[ID] as string, runKey: older[RUN_KEY] as string | null } : before ? { id: before[0], runKey: before[1] } : null;
      if (row[PREV] === PREVIOUS_IN_THREAD) row[PREV] = previous?.id ?? null;
      if (row[RUN_KEY] === SAME_RUN_AS_PREVIOUS) row[RUN_KEY] = previous?.runKey ?? null;
    }
    return raw;
  }
}
