import { sql } from "drizzle-orm";
import { failure, type Result } from "../../../core/runtime/result";
import type { AgentDb } from "../types";
import { recallIndex } from "../rows";

/** One recall hit; `rank` is FTS5 bm25 (lower is better, hits come best first). */
export interface RecallHit {
  messageId: string;
  kind: string;
  threadId: string;
  snippet: string;
  rank: number;
  createdAt: string;
}

const MAX_TERMS = 16;

/**
 * Turns free user text into an FTS5 query that cannot be a syntax error: only word characters
 * survive, each term is double-quoted (so AND/OR/NOT/NEAR, `*`, `:` and quotes are plain text),
 * and terms are OR-ed so bm25 ranks the messages matching the most (and rarest) terms first.
 * Returns null when nothing searchable is left.
 */
export function toFtsQuery(input: string): string | null {
  const terms = [...new Set(input.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])].slice(0, MAX_TERMS);
  return terms.length === 0 ? null : terms.map((term) => `"${term}"`).join(" OR ");
}

/** Ranked full-text search over this agent's messages (its own SQLite: nothing else is reachable). */
export function searchMessages(db: AgentDb, query: string, options: { limit: number; threadId?: string | undefined }): RecallHit[] | null {
  const match = toFtsQuery(query);
  if (match === null) return null;
  // Messages appended since the last batch are indexed first (rows/recall-index.ts): a search sees every message before it.
  recallIndex(db).catchUp();
  const thread = options.threadId === undefined ? sql`` : sql` AND m.thread_id = ${options.threadId}`;
  const rows = db.all<{ messageId: string; kind: string; threadId: string; snippet: string; rank: number; createdAt: string }>(sql`
    SELECT m.id AS messageId, m.kind AS kind, m.thread_id AS threadId, m.created_at AS createdAt,
           snippet(messages_fts, 0, '[', ']', '…', 16) AS snippet, bm25(messages_fts) AS rank
    FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid
    WHERE messages_fts MATCH ${match}${thread}
    ORDER BY rank, m.seq DESC
    LIMIT ${options.limit}`);
  return rows.map((row) => ({ messageId: row.messageId, kind: row.kind, threadId: row.threadId, snippet: row.snippet, rank: Number(row.rank), createdAt: row.createdAt }));
}

/** `GET …/memory/search`: recall hits, or validation_failed when the query has nothing to match on. */
export function recall(db: AgentDb, query: string, limit: number): Result<{ hits: RecallHit[] }> {
  const hits = searchMessages(db, query, { limit });
  return hits ? { ok: true, hits } : failure("validation_failed", "q must contain at least one letter or digit");
}
