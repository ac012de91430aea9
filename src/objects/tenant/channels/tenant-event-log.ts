import { and, asc, gt } from "drizzle-orm";
import type { ForwardedAgentEvent } from "../../../schema/contracts";
import { config } from "../../../config";
import { SSE_HEARTBEAT, sseFrame } from "../../../core/sse";
import * as schema from "../../../db/tenant-schema";
import type { TenantEvent } from "../../../schema/outbound-webhooks";
import { nowIso } from "../../shared/sqlite";
import { inList } from "../../shared/sql-in";
import type { TenantDb } from "../types";

type Row = typeof schema.tenantEvents.$inferSelect;

/** One persisted agent event as the AgentDO forwards it (its own seq becomes `agentSeq`). */
export type { ForwardedAgentEvent } from "../../../schema/contracts";

interface Subscriber {
  agentIds: ReadonlySet<string> | null;
  push(frame: string): void;
}

const encoder = new TextEncoder();

/**
 * The tenant-wide event log behind `GET /v1/events/stream` (SPEC §8): agents' events, forwarded in
 * batches and deduplicated by `(agentId, agentSeq)` so a re-sent batch adds nothing, and tenant-level
 * events. Appends happen inside the caller's transaction (with the webhook deliveries they cause);
 * the caller fans the returned events out once it has committed.
 */
export class TenantEventLog {
  private readonly subscribers = new Set<Subscriber>();

  constructor(private readonly db: TenantDb) {}

  /** Records the events not seen before, in agent order; returns only the new ones. */
  appendAgentEvents(tx: TenantDb, agentId: string, events: readonly ForwardedAgentEvent[]): TenantEvent[] {
    const appended: TenantEvent[] = [];
    for (const event of [...events].sort((a, b) => a.seq - b.seq)) {
      const row = tx
        .insert(schema.tenantEvents)
        .values({ type: event.type, agentId, agentSeq: event.seq, runKey: event.runKey, data: event.data, createdAt: event.createdAt })
        .onConflictDoNothing()
        .returning()
        .get();
      if (row) appended.push(toTenantEvent(row));
    }
    return appended;
  }

  /** A tenant-level event (a decision resolved, a brake): no agent seq, so never deduplicated. */
  appendTenantEvent(tx: TenantDb, type: string, agentId: string | null, runKey: string | null, data: Record<string, unknown>): TenantEvent {
    const row = tx.insert(schema.tenantEvents).values({ type, agentId, agentSeq: null, runKey, data, createdAt: nowIso() }).returning().get();
    return toTenantEvent(row);
  }

  /** Pushes committed events to live subscribers. */
  publish(events: readonly TenantEvent[]): void {
    for (const event of events) {
      const frame = sseFrame({ id: event.seq, event: event.type, data: event });
      for (const subscriber of this.subscribers) if (visible(subscriber.agentIds, event)) subscriber.push(frame);
    }
  }

  listAfter(after: number, limit: number, agentIds: readonly string[] | null = null): TenantEvent[] {
    if (agentIds !== null && agentIds.length === 0) return [];
    const e = schema.tenantEvents;
    const where = agentIds ? and(gt(e.seq, after), inList(e.agentId, agentIds)) : gt(e.seq, after);
    return this.db.select().from(e).where(where).orderBy(asc(e.seq)).limit(limit).all().map(toTenantEvent);
  }

  /**
   * Replays events after `after`, then goes live, with the agent stream's frames and heartbeat.
   * Replay and registration happen in one synchronous step, so no event falls between them.
   * `agentIds` narrows the stream (a widget token sees only its agents, and no tenant-level events without one).
   */
  subscribe(after: number, agentIds: readonly string[] | null): ReadableStream<Uint8Array> {
    // A native byte pipe rather than a JS source: a stream handed over RPC is not cancelled at its
    // source when the client goes away; a write to it fails instead (caught here, ending the
    // subscription), where a JS source would leave an uncaught "Network connection lost" behind.
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    let closed = false;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const subscribers = this.subscribers;
    const subscriber: Subscriber = {
      agentIds: agentIds ? new Set(agentIds) : null,
      push: (frame) => {
        if (!closed) writer.write(encoder.encode(frame)).catch(stop);
      },
    };
    function stop(): void {
      if (closed) return;
      closed = true;
      if (heartbeat !== undefined) clearInterval(heartbeat);
      subscribers.delete(subscriber);
      writer.abort().catch(() => undefined);
    }
    subscriber.push(": connected\n\n");
    let cursor = after;
    for (;;) {
      const batch = this.listAfter(cursor, config.sse.replayBatch, agentIds);
      for (const event of batch) subscriber.push(sseFrame({ id: event.seq, event: event.type, data: event }));
      if (batch.length < config.sse.replayBatch) break;
      cursor = batch[batch.length - 1]!.seq;
    }
    subscribers.add(subscriber);
    heartbeat = setInterval(() => subscriber.push(SSE_HEARTBEAT), config.sse.heartbeatMs);
    return readable;
  }
}

function visible(agentIds: ReadonlySet<string> | null, event: TenantEvent): boolean {
  return agentIds === null || (event.agentId !== null && agentIds.has(event.agentId));
}

function toTenantEvent(row: Row): TenantEvent {
  return { seq: row.seq, type: row.type, agentId: row.agentId, agentSeq: row.agentSeq, runKey: row.runKey, data: row.data, createdAt: row.createdAt };
}
