import { desc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Page } from "../../../schema/common";
import type { Message } from "../../../schema/agents/messages";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { toMessage, messageRow, PREVIOUS_IN_THREAD, SAME_RUN_AS_PREVIOUS } from "../rows";
import type { AgentDb } from "../types";
import { lean } from "../../shared/lean-query";

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

/**
 * Immutable, linked message rows. Ids are deterministic (derived from the runKey by the caller),
 * so re-executing an interrupted run appends nothing twice.
 */
export class History {
  /** The append path's reads, built once (drizzle builds a query's SQL on every call; issue 12 §8). */
  private readonly byId;
  private readonly threadHead;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
    private readonly agentId: () => string,
  ) {
    const m = schema.messages;
    this.byId = lean(db.select(messageRow).from(m).where(eq(m.id, sql.placeholder("id"))).prepare());
    this.threadHead = lean(db.select({ id: m.id, runKey: m.runKey }).from(m).where(eq(m.threadId, sql.placeholder("threadId"))).orderBy(desc(m.seq)).limit(1).prepare());
  }

  /** Appends once; returns the stored message and whether this call inserted it. */
  append(message: NewMessage): { message: Message; inserted: boolean } {
    const existing = this.byId.get({ id: message.id });
    if (existing) return { message: toMessage(this.agentId(), existing), inserted: false };
    const head = this.threadHead.get({ threadId: message.threadId });
    // Raw SQL (the query builder cost more than the insert; issue 12 §8). JSON columns are stored as
    // drizzle's json mode stores them, and read back through JSON so the message equals a later read of the row.
    // prevMessageId lives in its column only; toMessage puts it back into the metadata (issue 12 §6). The column holds
    // '' for "the thread's previous message by seq" — always the head read just above — and readers resolve it (message-row.ts).
    const metadata = JSON.stringify(message.metadata ?? {});
    const storedMetadata = message.storedMetadata ? JSON.stringify(message.storedMetadata) : metadata;
    const content = message.content === undefined || message.content === null ? null : JSON.stringify(message.content);
    const createdAt = nowIso();
    // The head's run key as stored: '' there means its own previous message's, so only a key stored in full is referred to.
    const runKey = message.runKey ?? null;
    const storedRunKey = runKey && head?.runKey === runKey ? SAME_RUN_AS_PREVIOUS : runKey;
    const inserted = this.db.get<{ seq: number }>(
      sql`INSERT INTO messages (id, thread_id, kind, text, content, prev_message_id, run_key, authority, metadata, created_at)
          VALUES (${message.id}, ${message.threadId}, ${message.kind}, ${message.text ?? null}, ${content}, ${head ? PREVIOUS_IN_THREAD : null}, ${storedRunKey}, ${message.authority ?? null}, ${storedMetadata}, ${createdAt}) RETURNING seq`,
    );
    const row: typeof schema.messages.$inferSelect = {
      seq: inserted.seq,
      id: message.id,
      threadId: message.threadId,
      kind: message.kind,
      text: message.text ?? null,
      content: content === null ? null : (JSON.parse(content) as unknown),
      prevMessageId: head?.id ?? null,
      runKey: message.runKey ?? null,
      authority: message.authority ?? null,
      metadata: JSON.parse(metadata) as Record<string, unknown>,
      createdAt,
    };
    const stored = toMessage(this.agentId(), row);
    this.events.append("message.appended", row.runKey, { message: stored });
    return { message: stored, inserted: true };
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
