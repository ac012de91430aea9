import { getTableColumns, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";

/**
 * Issue 12 §6 (bytes per turn): a message's `prev_message_id` is the id of the message before it in its thread (the
 * thread's head when it was appended: messages are immutable and only ever deleted all at once, by erasure). Since
 * session 7 a row stores `''` there instead of repeating that 64-character id; NULL still means "first in its thread",
 * and rows written before keep the id itself. The id is never the empty string (ids are hashes or prefixed random ids).
 */
export const PREVIOUS_IN_THREAD = "";

/** The thread's previous message's column `column` (one probe of `messages_thread_seq`). */
const previous = (column: "id" | "run_key") =>
  sql.raw(`(SELECT "p"."${column}" FROM "messages" "p" WHERE "p"."thread_id" = "messages"."thread_id" AND "p"."seq" < "messages"."seq" ORDER BY "p"."seq" DESC LIMIT 1)`);

/**
 * `prev_message_id` as every reader sees it: the stored id, or for `''` the id of the thread's previous message by
 * seq — one probe of `messages_thread_seq`, inside SQLite, only for rows stored that way. The outer table must be
 * `messages` itself (not aliased): every reader selects from it by that name.
 */
export const prevMessageIdSql = sql<string | null>`CASE WHEN "messages"."prev_message_id" = '' THEN ${previous("id")} ELSE "messages"."prev_message_id" END`;

/**
 * `run_key` likewise: `''` stores "the same run key as the thread's previous message", written only when that
 * message's stored run key is the key itself (a run's reply after its input, a step after a step stored in full),
 * so one probe resolves it. Nothing selects messages by run key in SQL; every reader goes through `messageRow`.
 */
export const SAME_RUN_AS_PREVIOUS = "";
export const runKeySql = sql<string | null>`CASE WHEN "messages"."run_key" = '' THEN ${previous("run_key")} ELSE "messages"."run_key" END`;

/**
 * A summary message's span from its `summaries` row, as a JSON array in `SPAN_KEYS` order (summary-metadata.ts):
 * its stored metadata leaves the span out. A probe of the summaries key, for summary messages only.
 */
export const summarySpanSql = sql<string | null>`CASE WHEN "messages"."kind" = 'summary' THEN (SELECT json_array("s"."summary_depth", "s"."start_message_id", "s"."end_message_id", "s"."covered_from_seq", "s"."covered_through_seq", "s"."summary_content_hash", "s"."summarizer_contract_version") FROM "summaries" "s" WHERE "s"."message_id" = "messages"."id") END`;

/** The selection of a whole message row with `prevMessageId`, `runKey` and a summary's span resolved: use it wherever a row becomes a `Message`. */
export const messageRow = { ...getTableColumns(schema.messages), prevMessageId: prevMessageIdSql, runKey: runKeySql, summarySpan: summarySpanSql };

// The hot path's resolution of `''` for a run context's page is hot-page.ts (one statement with the page).
