import { desc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Page } from "../../../schema/common";
import type { Message } from "../../../schema/agents/messages";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { toMessage, memoryCopy, messageRow, pageRowOf, plannerTokens, PREVIOUS_IN_THREAD, SAME_RUN_AS_PREVIOUS, type MemoryCopy } from "../rows";
import { hasLoneSurrogate } from "../../../core/memory/memory-policy";
import type { AgentDb } from "../types";
import { leanSite, rawSite } from "../../shared/statements/statement-sites";

export interface NewMessage {
  id: string;
  threadId: string;
  kind: Message["kind"];
  text?: string | undefined;
  content?: unknown;
  runKey?: string | null;
  authority?: string | null;
  metadata?: Record<string, unknown>;
  /** What to store instead of `metadata` when readers restore the rest (a summary's span: summary-metadata.ts). */
  storedMetadata?: Record<string, unknown> | undefined;
}

// Built once per isolate (objects/shared/statements/statement-sites.ts, session 11).
const m = schema.messages;
const BY_ID = leanSite("history.byId", (db: AgentDb) => db.select(messageRow).from(m).where(eq(m.id, sql.placeholder("id"))).prepare());
const p = (name: string) => sql.placeholder(name);
// The head's run key as stored: '' there means its own previous message's, so only a key stored in full is
// referred to ('' for "the same run key as the previous message", message-row.ts). The insert lands after the
// head, so `prev` (the row before the new one) is that head.
const INSERT = rawSite<{ seq: number; prev: string | null }>(
  "history.insert",
  () => sql`INSERT INTO messages (id, thread_id, kind, text, content, prev_message_id, run_key, authority, metadata, created_at)
      SELECT ${p("id")}, ${p("threadId")}, ${p("kind")}, ${p("text")}, ${p("content")},
        CASE WHEN "h"."id" IS NULL THEN NULL ELSE ${PREVIOUS_IN_THREAD} END,
        CASE WHEN ${p("runKey")} IS NOT NULL AND "h"."run_key" = ${p("runKey")} THEN ${SAME_RUN_AS_PREVIOUS} ELSE ${p("runKey")} END,
        ${p("authority")}, ${p("metadata")}, ${p("createdAt")}
      FROM (SELECT 1) LEFT JOIN (SELECT "id", "run_key" FROM "messages" WHERE "thread_id" = ${p("threadId")} ORDER BY "seq" DESC LIMIT 1) "h" ON 1
      WHERE 1 ON CONFLICT ("id") DO NOTHING
      RETURNING "seq" AS "seq", (SELECT "q"."id" FROM "messages" "q" WHERE "q"."thread_id" = "messages"."thread_id" AND "q"."seq" < "messages"."seq" ORDER BY "q"."seq" DESC LIMIT 1) AS "prev"`,
);

/**
 * Immutable, linked message rows. Ids are deterministic (derived from the runKey by the caller),
 * so re-executing an interrupted run appends nothing twice.
 */
export class History {
  /** The append path's reads, built once (drizzle builds a query's SQL on every call; issue 12 §8). */
  private readonly byId;
  private readonly insertQuery;
  /** What the op reads, kept exact (memory-copy.ts): this class writes every message, so it updates the copy. */
  private readonly copy: MemoryCopy;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
    private readonly agentId: () => string,
  ) {
    this.byId = BY_ID.bind(db);
    this.insertQuery = INSERT.bind(db);
    this.copy = memoryCopy(db);
  }

  /** Appends once; returns the stored message and whether this call inserted it. */
  append(message: NewMessage): { message: Message; inserted: boolean; seq: number } {
    // Raw SQL (the query builder cost more than the insert; issue 12 §8). JSON columns are stored as
    // drizzle's json mode stores them, and read back through JSON so the message equals a later read of the row.
    // prevMessageId lives in its column only; toMessage puts it back into the metadata (issue 12 §6). The column holds
    // '' for "the thread's previous message by seq" — always the head read in the same statement — and readers resolve it (message-row.ts).
    const metadata = JSON.stringify(message.metadata ?? {});
    const storedMetadata = message.storedMetadata ? JSON.stringify(message.storedMetadata) : metadata;
    const content = message.content === undefined || message.content === null ? null : JSON.stringify(message.content);
    const createdAt = nowIso();
    const runKey = message.runKey ?? null;
    const text = message.text ?? null;
    // One statement (session 8; three until then): the thread's head, the insert unless the id exists, and the
    // head's id back. No row back: the id exists (a replay), read as first written.
    const [inserted] = this.insertQuery.all({ id: message.id, threadId: message.threadId, kind: message.kind, text, content, runKey, authority: message.authority ?? null, metadata: storedMetadata, createdAt });
    if (!inserted) {
      const existing = this.byId.get({ id: message.id })!;
      return { message: toMessage(this.agentId(), existing), inserted: false, seq: existing.seq };
    }
    const head = inserted.prev === null ? null : { id: inserted.prev };
    const row: typeof schema.messages.$inferSelect = {
      seq: inserted.seq,
      id: message.id,
      threadId: message.threadId,
      kind: message.kind,
      text,
      content: content === null ? null : (JSON.parse(content) as unknown),
      prevMessageId: head?.id ?? null,
      runKey: message.runKey ?? null,
      authority: message.authority ?? null,
      // Read back through JSON (as a later read would), except the common empty document (no parse per append).
      metadata: metadata === "{}" ? {} : (JSON.parse(metadata) as Record<string, unknown>),
      createdAt,
    };
    this.keep(row, text, content, storedMetadata);
    const stored = toMessage(this.agentId(), row);
    this.events.append("message.appended", row.runKey, { message: stored });
    return { message: stored, inserted: true, seq: inserted.seq };
  }

  /**
   * The row just inserted, as the hot page and the planner's count would read it now (memory-copy.ts): stored JSON
   * text for content and metadata, links resolved (`prev` is the head the insert read; the run key is the one given:
   * `''` is stored only when the head's equals it). A text that SQLite would store differently (a lone surrogate becomes
   * U+FFFD) is not kept: the thread is read afresh instead.
   */
  private keep(row: typeof schema.messages.$inferSelect, text: string | null, content: string | null, metadata: string): void {
    if (text !== null && hasLoneSurrogate(text)) return this.copy.forgetThread(row.threadId);
    const pageRow = pageRowOf({ ...row, text, content, metadata });
    const tokens = plannerTokens(text, content);
    // No previous message (the insert's own read): the thread held nothing before this row.
    if (row.prevMessageId === null) this.copy.newThread(row.threadId, row.kind, pageRow, tokens);
    else this.copy.appended(row.threadId, row.kind, pageRow, tokens);
  }

  get(id: string): Message | null {
    const row = this.byId.get({ id });
    return row ? toMessage(this.agentId(), row) : null;
  }

  /** The newest `limit` messages of a thread, oldest first: a bounded read whatever the history length. */
  window(threadId: string, limit: number): Message[] {
    return this.db
      .select(messageRow)
      .from(schema.messages)
      .where(eq(schema.messages.threadId, threadId))
      .orderBy(desc(schema.messages.seq))
      .limit(limit)
      .all()
      .reverse()
      .map((row) => toMessage(this.agentId(), row));
  }

  /** Newest first; the cursor continues towards older messages. */
  list(options: { threadId?: string | undefined; beforeSeq?: number | undefined; limit: number }): Page<Message> & { lastSeq: number | null } {
    const m = schema.messages;
    const where = [options.threadId ? eq(m.threadId, options.threadId) : undefined];
    const from = options.beforeSeq === undefined ? undefined : { c: options.beforeSeq };
    const { rows, last } = keysetPage(this.db, { table: m, columns: messageRow, sort: m.seq, order: "desc", where, limit: options.limit, from });
    return { data: rows.map((row) => toMessage(this.agentId(), row)), nextCursor: null, lastSeq: last ? last.seq : null };
  }
}
