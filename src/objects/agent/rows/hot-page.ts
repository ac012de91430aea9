import { sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { rawRowsStatement, tableRowDecoder } from "../../shared/lean-query";
import type { AgentDb } from "../types";
import { PREVIOUS_IN_THREAD, SAME_RUN_AS_PREVIOUS } from "./message-row";

type StoredMessageRow = typeof schema.messages.$inferSelect;

const messageDecoder = tableRowDecoder<StoredMessageRow>(schema.messages);

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

  constructor(db: AgentDb, limit: number) {
    const t = sql.placeholder("threadId");
    const columnList = messageDecoder.columns.map((name) => `"${name}"`).join(", ");
    const pageColumns = messageDecoder.columns.map((name) => `"page"."${name}"`).join(", ");
    this.statement = rawRowsStatement(
      db,
      sql`WITH "page" AS MATERIALIZED (
            SELECT ${sql.raw(columnList)} FROM "messages"
            WHERE "thread_id" = ${t} AND "kind" != 'summary'
              AND "seq" > coalesce((SELECT "compacted_through_seq" FROM "thread_memory" WHERE "thread_id" = ${t}), 0)
            ORDER BY "seq" DESC LIMIT ${sql.raw(String(Math.trunc(limit)))}),
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
    const raw = this.statement.all({ threadId });
    if (raw.length === 0) return [];
    const rows = raw.map((r) => messageDecoder.decode(r));
    if (!rows.some((row) => row.prevMessageId === PREVIOUS_IN_THREAD || row.runKey === SAME_RUN_AS_PREVIOUS)) return rows;
    // The two extra columns follow the message's.
    const width = messageDecoder.columns.length;
    const between = raw[0]![width];
    const summaries = typeof between === "string" ? (JSON.parse(between) as [string, number][]).map(([id, seq]) => ({ id, seq })) : [];
    const beforeRaw = raw[raw.length - 1]![width + 1];
    const before = typeof beforeRaw === "string" ? (JSON.parse(beforeRaw) as [string, string | null]) : null;
    return rows.map((row, i) => {
      if (row.prevMessageId !== PREVIOUS_IN_THREAD && row.runKey !== SAME_RUN_AS_PREVIOUS) return row;
      const older = rows[i + 1];
      let summary: { id: string; seq: number } | undefined;
      if (older) for (const s of summaries) if (s.seq > older.seq && s.seq < row.seq && (!summary || s.seq > summary.seq)) summary = s;
      // Stored run keys here are never '' for what a '' refers to (see above); the probe only past the page's end.
      const previous = summary ? { id: summary.id, runKey: null } : older ? { id: older.id, runKey: older.runKey } : before ? { id: before[0], runKey: before[1] } : null;
      return {
        ...row,
        prevMessageId: row.prevMessageId === PREVIOUS_IN_THREAD ? (previous?.id ?? null) : row.prevMessageId,
        runKey: row.runKey === SAME_RUN_AS_PREVIOUS ? (previous?.runKey ?? null) : row.runKey,
      };
    });
  }
}
