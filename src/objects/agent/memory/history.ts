import { desc, eq } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Page } from "../../../schema/common";
import type { Message } from "../../../schema/messages";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { toMessage } from "../records";
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
}

/**
 * Immutable, linked message rows. Ids are deterministic (derived from the runKey by the caller),
 * so re-executing an interrupted run appends nothing twice.
 */
export class History {
  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
    private readonly agentId: () => string,
  ) {}

  /** Appends once; returns the stored message and whether this call inserted it. */
  append(message: NewMessage): { message: Message; inserted: boolean } {
    const existing = this.db.select().from(schema.messages).where(eq(schema.messages.id, message.id)).get();
    if (existing) return { message: toMessage(this.agentId(), existing), inserted: false };
    const head = this.db
      .select({ id: schema.messages.id })
      .from(schema.messages)
      .where(eq(schema.messages.threadId, message.threadId))
      .orderBy(desc(schema.messages.seq))
      .limit(1)
      .get();
    const row = this.db
      .insert(schema.messages)
      .values({
        id: message.id,
        threadId: message.threadId,
        kind: message.kind,
        text: message.text ?? null,
        content: message.content ?? null,
        prevMessageId: head?.id ?? null,
        runKey: message.runKey ?? null,
        authority: message.authority ?? null,
        // prevMessageId lives in its column only; toMessage puts it back into the metadata (issue 12 §6).
        metadata: message.metadata ?? {},
        createdAt: nowIso(),
      })
      .returning()
      .get();
    const stored = toMessage(this.agentId(), row);
    this.events.append("message.appended", row.runKey, { message: stored });
    return { message: stored, inserted: true };
  }

  get(id: string): Message | null {
    const row = this.db.select().from(schema.messages).where(eq(schema.messages.id, id)).get();
    return row ? toMessage(this.agentId(), row) : null;
  }

  /** The newest `limit` messages of a thread, oldest first: a bounded read whatever the history length. */
  window(threadId: string, limit: number): Message[] {
    return this.db
      .select()
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
    const { rows, last } = keysetPage(this.db, { table: m, sort: m.seq, order: "desc", where, limit: options.limit, from });
    return { data: rows.map((row) => toMessage(this.agentId(), row)), nextCursor: null, lastSeq: last ? last.seq : null };
  }
}
