import { desc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Page } from "../../../schema/common";
import type { Message } from "../../../schema/agents/messages";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { toMessage, messageRow } from "../rows";
import type { AgentDb } from "../types";

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

const m = schema.messages;

/**
 * The insert unless the id exists, linking the row to the thread's head (its previous message, read in the same
 * statement on `messages_thread_seq`); returns the new row's seq and link, no row for an id already stored.
 */
function insertMessage(v: { id: string; threadId: string; kind: string; text: string | null; content: string | null; runKey: string | null; authority: string | null; metadata: string; createdAt: string }) {
  const head = sql`(SELECT ${m.id} FROM ${m} WHERE ${m.threadId} = ${v.threadId} ORDER BY ${m.seq} DESC LIMIT 1)`;
  return sql`INSERT INTO ${m} (id, thread_id, kind, text, content, prev_message_id, run_key, authority, metadata, created_at)
    SELECT ${v.id}, ${v.threadId}, ${v.kind}, ${v.text}, ${v.content}, ${head}, ${v.runKey}, ${v.authority}, ${v.metadata}, ${v.createdAt}
    WHERE 1 ON CONFLICT (id) DO NOTHING RETURNING seq, prev_message_id AS prev`;
}

/**
 * Immutable, linked message rows. Ids are deterministic (derived from the runKey by the caller),
 * so re-executing an interrupted run appends nothing twice.
 */
export class History {
  private readonly byId;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
    private readonly agentId: () => string,
  ) {
    this.byId = db.select(messageRow).from(m).where(eq(m.id, sql.placeholder("id"))).prepare();
  }

  /** Appends once; returns the stored message and whether this call inserted it. */
  append(message: NewMessage): { message: Message; inserted: boolean; seq: number } {
    // JSON columns are stored as drizzle's json mode stores them, and read back through JSON so the message equals a
    // later read of the row. prevMessageId lives in its column only; toMessage puts it back into the metadata.
    const metadata = JSON.stringify(message.metadata ?? {});
    const storedMetadata = message.storedMetadata ? JSON.stringify(message.storedMetadata) : metadata;
    const content = message.content === undefined || message.content === null ? null : JSON.stringify(message.content);
    const createdAt = nowIso();
    const runKey = message.runKey ?? null;
    const text = message.text ?? null;
    // No row back: the id exists (a replay), read as first written.
    const [inserted] = this.db.all<{ seq: number; prev: string | null }>(
      insertMessage({ id: message.id, threadId: message.threadId, kind: message.kind, text, content, runKey, authority: message.authority ?? null, metadata: storedMetadata, createdAt }),
    );
    if (!inserted) {
      const existing = this.byId.get({ id: message.id })!;
      return { message: toMessage(this.agentId(), existing), inserted: false, seq: existing.seq };
    }
    const row: typeof schema.messages.$inferSelect = {
      seq: inserted.seq,
      id: message.id,
      threadId: message.threadId,
      kind: message.kind,
      text,
      content: content === null ? null : (JSON.parse(content) as unknown),
      prevMessageId: inserted.prev,
      runKey: message.runKey ?? null,
      authority: message.authority ?? null,
      // Read back through JSON (as a later read would), except the common empty document (no parse per append).
      metadata: metadata === "{}" ? {} : (JSON.parse(metadata) as Record<string, unknown>),
      createdAt,
    };
    const stored = toMessage(this.agentId(), row);
    this.events.append("message.appended", row.runKey, { message: stored });
    return { message: stored, inserted: true, seq: inserted.seq };
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
