import { getTableColumns, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";

/**
 * A summary message's span from its `summaries` row, as a JSON array in `SPAN_KEYS` order (summary-metadata.ts):
 * its stored metadata leaves the span out. A probe of the summaries key, for summary messages only.
 */
export const summarySpanSql = sql<string | null>`CASE WHEN "messages"."kind" = 'summary' THEN (SELECT json_array("s"."summary_depth", "s"."start_message_id", "s"."end_message_id", "s"."covered_from_seq", "s"."covered_through_seq", "s"."summary_content_hash", "s"."summarizer_contract_version") FROM "summaries" "s" WHERE "s"."message_id" = "messages"."id") END`;

/** The selection of a whole message row with a summary's span resolved: use it wherever a row becomes a `Message`. */
export const messageRow = { ...getTableColumns(schema.messages), summarySpan: summarySpanSql };
