import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { config } from "../../../config";
import { SSE_HEARTBEAT, sseFrame } from "../../../core/runtime/sse";
import * as schema from "../../../db/agent-schema";
import type { AgentEvent } from "../../../schema/agents/runs";
import { nowIso } from "../../shared/sqlite";
import { hydrateEvents, storedEventData } from "./event-refs";
import { headSeq, insertEvent, storedEventsAfter } from "./stored-events";
import { type CommitGate, commitGate } from "../../shared/commit-gate";

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
  /** Only events this accepts reach the stream, replayed and live alike (a widget token's own threads). */
  visible?: (event: { type: string; runKey: string | null }) => boolean;
}

const encoder = new TextEncoder();

/**
 * The agent's append-only event log and its live fan-out. Persisted events carry `seq` (the SSE id);
 * live-only events (text.delta) reach current subscribers and are never replayed.
 */
export class EventLog {
  private readonly subscribers = new Set<Subscriber>();
  /** Frames leave once the transaction that wrote their rows has committed (../../shared/commit-gate.ts). */
  private readonly gate: CommitGate;

  constructor(
    private readonly db: Db,
    private readonly agentId: () => string = () => "",
  ) {
    this.gate = commitGate(db);
  }

  /** Called with every persisted event's type once it is committed (the tenant-stream forwarder). */
  private persisted: ((type: string) => void) | null = null;

  onPersisted(listener: (type: string) => void): void {
    this.persisted = listener;
  }

  /**
   * Persists an event; live subscribers and the forwarder hear of it once the caller's transaction (if any) has
   * committed, and never when it rolls back. Call inside or after the write's transaction.
   */
  append(type: string, runKey: string | null, data: Record<string, unknown>): AgentEvent {
    // The stored row refers to the message / run instead of copying it (./event-refs.ts); readers hydrate.
    const createdAt = nowIso();
    const seq = insertEvent(this.db, type, runKey, JSON.stringify(storedEventData(type, runKey, data)), createdAt);
    const event: AgentEvent = { seq, type, runKey, data, createdAt };
    this.gate.afterCommit(() => {
      this.fanOut({ type, runKey }, () => sseFrame({ id: event.seq, event: type, data: event }));
      this.persisted?.(type);
    });
    return event;
  }

  /** A live-only event: no seq, no replay (behind the persisted frames of an open transaction, in order). */
  live(type: string, runKey: string | null, data: Record<string, unknown>): void {
    this.gate.afterCommit(() => this.fanOut({ type, runKey }, () => sseFrame({ event: type, data: { type, runKey, data } })));
  }

  /** The newest persisted seq (0 for an empty log): where a reader of current state continues live. */
  headSeq(): number {
    return headSeq(this.db);
  }

  /** `runKey` reads one run's events through its index, so a run's replay costs its own rows, not the log's. */
  listAfter(after: number, limit: number, runKey?: string): AgentEvent[] {
    return hydrateEvents(this.db, this.agentId(), storedEventsAfter(this.db, after, limit, runKey));
  }

  /**
   * Replays persisted events after `after` (none for "live"), then goes live. Replay and registration happen in one
   * synchronous step, so no event can fall between them (the DO runs one JS turn at a time).
   *
   * A native byte pipe rather than a JS source: a stream handed over RPC is not cancelled at its
   * source when the client goes away; a write to it fails instead, which ends the subscription here.
   * (A JS source would keep a dead subscriber and leave an uncaught "Network connection lost".)
   */
  subscribe(after: number | "live", filter: StreamFilter = {}): ReadableStream<Uint8Array> {
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    const subscribers = this.subscribers;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let closed = false;
    // The frames pushed in one stretch of work, written as one chunk when it ends (see `push`).
    let queued: string[] | null = null;
    const write = () => {
      const frames = queued;
      queued = null;
      if (frames) writer.write(encoder.encode(frames.join(""))).catch(() => end(false));
    };
    const end = (graceful: boolean) => {
      if (closed) return;
      if (graceful) write();
      closed = true;
      queued = null;
      if (heartbeat !== undefined) clearInterval(heartbeat);
      subscribers.delete(subscriber);
      (graceful ? writer.close() : writer.abort()).catch(() => undefined);
    };
    const matches = (event: { type: string; runKey: string | null }) =>
      (filter.runKey === undefined || event.runKey === filter.runKey) && (filter.visible === undefined || filter.visible(event));
    const subscriber: Subscriber = {
      // Every chunk crosses the pipe to its reader (RPC, then the Worker's response) on event-loop turns of its own,
      // and locally the run's report and the tenant's commit ran between a turn's chunks, ahead of `run.completed`
      // (issue 12 §8). So a stream writes what one stretch pushed as one chunk: on a 0 ms timer, i.e. once the
      // stretch and its microtasks are done (a builtin-model run's frames all come in one stretch, and its end
      // writes them with the close), and in order. The same bytes; a remote model's deltas still leave as they come.
      push: (frame) => {
        if (closed) return;
        if (queued) queued.push(frame);
        else {
          queued = [frame];
          setTimeout(() => {
            if (!closed) write();
          }, 0);
        }
      },
      accepts: matches,
      endsOn: (event) => matches(event) && (filter.closeOn?.includes(event.type) ?? false),
      close: () => end(true),
    };
    // Written at once, so the stream has its first bytes when it is handed over (a stream guard ending it before
    // any frame came — a revoked key — was left waiting otherwise).
    writer.write(encoder.encode(": connected\n\n")).catch(() => end(false));
    // "live": nothing persisted is replayed (a new run's stream: none of its events exists yet, so no read is needed).
    for (let cursor = after; cursor !== "live"; ) {
      const batch = this.listAfter(cursor, config.sse.replayBatch, filter.runKey);
      for (const event of batch) {
        if (!matches(event)) continue;
        subscriber.push(sseFrame({ id: event.seq, event: event.type, data: event }));
        if (subscriber.endsOn(event)) {
          subscriber.close();
          return readable;
        }
      }
      if (batch.length < config.sse.replayBatch) break;
      cursor = batch[batch.length - 1]!.seq;
    }
    subscribers.add(subscriber);
    heartbeat = setInterval(() => subscriber.push(SSE_HEARTBEAT), config.sse.heartbeatMs);
    return readable;
  }

  /** The frame is serialized once, and only when a subscriber takes it (most appends have none). */
  private fanOut(event: { type: string; runKey: string | null }, render: () => string): void {
    if (this.subscribers.size === 0) return;
    let frame: string | null = null;
    for (const subscriber of [...this.subscribers]) {
      if (!subscriber.accepts(event)) continue;
      frame ??= render();
      subscriber.push(frame);
      if (subscriber.endsOn(event)) subscriber.close();
    }
  }
}
