import { asc, desc, gt } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { config } from "../../config";
import { SSE_HEARTBEAT, sseFrame } from "../../core/sse";
import * as schema from "../../db/agent-schema";
import type { AgentEvent } from "../../schema/runs";
import { nowIso } from "../sqlite";
import { toEvent } from "./records";

type Db = DrizzleSqliteDODatabase<typeof schema>;

interface Subscriber {
  push(frame: string): void;
  /** Called with every event (persisted or live); returns true when the stream should end. */
  accepts(event: { type: string; runKey: string | null }): boolean;
  endsOn(event: { type: string; runKey: string | null }): boolean;
  close(): void;
}

export interface StreamFilter {
  runKey?: string;
  /** Close the stream after the first event of one of these types (for the given runKey). */
  closeOn?: ReadonlyArray<string>;
}

const encoder = new TextEncoder();

/**
 * The agent's append-only event log and its live fan-out. Persisted events carry `seq` (the SSE id);
 * live-only events (text.delta) reach current subscribers and are never replayed.
 */
export class EventLog {
  private readonly subscribers = new Set<Subscriber>();

  constructor(private readonly db: Db) {}

  /** Called with every persisted event's type after it is written (the tenant-stream forwarder). */
  private persisted: ((type: string) => void) | null = null;

  onPersisted(listener: (type: string) => void): void {
    this.persisted = listener;
  }

  /** Persists an event and pushes it to live subscribers; call inside or after the write's transaction. */
  append(type: string, runKey: string | null, data: Record<string, unknown>): AgentEvent {
    const row = this.db.insert(schema.events).values({ type, runKey, data, createdAt: nowIso() }).returning().get();
    const event = toEvent(row);
    this.fanOut({ type, runKey }, sseFrame({ id: event.seq, event: type, data: event }));
    this.persisted?.(type);
    return event;
  }

  /** A live-only event: no seq, no replay. */
  live(type: string, runKey: string | null, data: Record<string, unknown>): void {
    this.fanOut({ type, runKey }, sseFrame({ event: type, data: { type, runKey, data } }));
  }

  /** The newest persisted seq (0 for an empty log): where a reader of current state continues live. */
  headSeq(): number {
    return this.db.select({ seq: schema.events.seq }).from(schema.events).orderBy(desc(schema.events.seq)).limit(1).get()?.seq ?? 0;
  }

  listAfter(after: number, limit: number): AgentEvent[] {
    return this.db.select().from(schema.events).where(gt(schema.events.seq, after)).orderBy(asc(schema.events.seq)).limit(limit).all().map(toEvent);
  }

  /**
   * Replays persisted events after `after`, then goes live. Replay and registration happen in one
   * synchronous step, so no event can fall between them (the DO runs one JS turn at a time).
   */
  subscribe(after: number, filter: StreamFilter = {}): ReadableStream<Uint8Array> {
    let subscriber: Subscriber | undefined;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const subscribers = this.subscribers;
    const stop = () => {
      if (heartbeat !== undefined) clearInterval(heartbeat);
      if (subscriber) subscribers.delete(subscriber);
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        const matches = (event: { runKey: string | null }) => filter.runKey === undefined || event.runKey === filter.runKey;
        const ends = (event: { type: string; runKey: string | null }) => matches(event) && (filter.closeOn?.includes(event.type) ?? false);
        let closed = false;
        subscriber = {
          push: (frame) => {
            if (!closed) controller.enqueue(encoder.encode(frame));
          },
          accepts: matches,
          endsOn: ends,
          close: () => {
            if (closed) return;
            closed = true;
            stop();
            controller.close();
          },
        };
        controller.enqueue(encoder.encode(": connected\n\n"));
        let cursor = after;
        for (;;) {
          const batch = this.listAfter(cursor, config.sse.replayBatch);
          for (const event of batch) {
            if (!matches(event)) continue;
            subscriber.push(sseFrame({ id: event.seq, event: event.type, data: event }));
            if (ends(event)) {
              subscriber.close();
              return;
            }
          }
          if (batch.length < config.sse.replayBatch) break;
          cursor = batch[batch.length - 1]!.seq;
        }
        subscribers.add(subscriber);
        heartbeat = setInterval(() => subscriber?.push(SSE_HEARTBEAT), config.sse.heartbeatMs);
      },
      cancel: () => stop(),
    });
  }

  private fanOut(event: { type: string; runKey: string | null }, frame: string): void {
    for (const subscriber of [...this.subscribers]) {
      if (!subscriber.accepts(event)) continue;
      subscriber.push(frame);
      if (subscriber.endsOn(event)) subscriber.close();
    }
  }
}
