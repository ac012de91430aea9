import { and, asc, gt, sql } from "drizzle-orm";
import type { ForwardedAgentEvent } from "../../../schema/contracts";
import { config } from "../../../config";
import { SSE_HEARTBEAT, sseFrame } from "../../../core/runtime/sse";
import * as schema from "../../../db/tenant-schema";
import type { TenantStreamItem } from "../../../db/tenant/channels";
import type { TenantEvent } from "../../../schema/admin/outbound-webhooks";
import { nowIso } from "../../shared/sqlite";
import { inList } from "../../shared/statements/sql-in";
import { commitGate } from "../../shared/commit-gate";
import type { TenantDb } from "../types";

type Row = typeof schema.tenantEvents.$inferSelect;

/** One persisted agent event as the AgentDO forwards it (its own seq becomes `agentSeq`). */
export type { ForwardedAgentEvent } from "../../../schema/contracts";

interface Subscriber {
  agentIds: ReadonlySet<string> | null;
  push(frame: string): void;
  /** Committed events, in seq order, with their frames (buffered while the replay is still under way). */
  deliver(events: readonly TenantEvent[], frames: readonly string[]): void;
}

/** An agent's stored events after `after` (`AgentDO.listEvents`): what a reference row is hydrated from. */
export type AgentEventSource = (agentId: string, after: number, limit: number) => Promise<Array<{ seq: number; data: Record<string, unknown> }>>;

/** Agent events read per hydration call. */
const HYDRATE_BATCH = 500;

const encoder = new TextEncoder();

/**
 * The tenant-wide event log behind `GET /v1/events/stream`: agents' events, one row per run report, and tenant-level
 * events. Appends happen inside the caller's transaction (with the webhook deliveries they cause); live subscribers
 * get them once it has committed.
 *
 * An agent event is stored as a reference (agent, agent seq, type, run key, time) without a second copy of its data,
 * which the agent already holds. Live subscribers and outbound webhooks get the
 * data as forwarded; a replay hydrates it from the agent (one `listEvents` call per agent and batch). An
 * agent event the agent has already pruned replays with `data: {}`.
 */
export class TenantEventLog {
  private readonly subscribers = new Set<Subscriber>();

  constructor(
    private readonly db: TenantDb,
    private readonly agentEvents?: AgentEventSource,
  ) {}

  /**
   * Records a report's events as one row, in agent order, each under its own tenant seq. The caller passes only
   * events new here (the agent's report numbering says which: RunReports).
   */
  appendAgentEvents(agentId: string, events: readonly ForwardedAgentEvent[]): TenantEvent[] {
    if (events.length === 0) return [];
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    // The agent holds the data; a replay reads it back from the agent (`hydrate`).
    const items = sorted.map((event): TenantStreamItem => [event.type, event.seq, event.runKey, event.createdAt, this.agentEvents ? {} : event.data]);
    const last = this.insertRow(this.db, agentId, items);
    return sorted.map((event, i) => ({ seq: last - sorted.length + 1 + i, type: event.type, agentId, agentSeq: event.seq, runKey: event.runKey, data: event.data, createdAt: event.createdAt }));
  }

  /**
   * One row of `items`, its seq the last of theirs: the next seqs after the highest this log ever gave (AUTOINCREMENT's
   * own high-water mark, so a pruned or erased seq is never given again). Returns that seq.
   */
  private insertRow(tx: TenantDb, agentId: string | null, items: TenantStreamItem[]): number {
    const next = sql`coalesce((SELECT "seq" FROM sqlite_sequence WHERE "name" = 'tenant_events'), 0) + ${items.length}`;
    return tx.get<{ seq: number }>(sql`INSERT INTO tenant_events (seq, agent_id, items, created_at) VALUES (${next}, ${agentId}, ${JSON.stringify(items)}, ${nowIso()}) RETURNING seq`).seq;
  }

  /** A tenant-level event (a decision resolved, a brake): no agent seq, so never deduplicated. */
  appendTenantEvent(tx: TenantDb, type: string, agentId: string | null, runKey: string | null, data: Record<string, unknown>): TenantEvent {
    const createdAt = nowIso();
    const seq = this.insertRow(tx, agentId, [[type, null, runKey, createdAt, data]]);
    return { seq, type, agentId, agentSeq: null, runKey, data, createdAt };
  }

  /**
   * Pushes committed events to live subscribers (once the caller's open transaction, if any, has committed). Each event's frame is rendered once for all subscribers, and each
   * subscriber gets its visible events as one write (issue 12 §7: every run report publishes its batch, a frame
   * and a stream write per event and subscriber before); the bytes and their order on every stream are the same.
   */
  publish(events: readonly TenantEvent[]): void {
    if (events.length > 0) commitGate(this.db).afterCommit(() => this.deliver(events));
  }

  private deliver(events: readonly TenantEvent[]): void {
    if (this.subscribers.size === 0) return;
    const frames = events.map(frameOf);
    for (const subscriber of this.subscribers) {
      const all = subscriber.agentIds === null || events.every((event) => visible(subscriber.agentIds, event));
      if (all) subscriber.deliver(events, frames);
      else {
        const shown = events.flatMap((event, i) => (visible(subscriber.agentIds, event) ? [i] : []));
        if (shown.length > 0) subscriber.deliver(shown.map((i) => events[i]!), shown.map((i) => frames[i]!));
      }
    }
  }

  /** The events after `after` in the next `limit` rows; `full`: that many rows were read (more may follow). */
  listAfter(after: number, limit: number, agentIds: readonly string[] | null = null): { events: TenantEvent[]; full: boolean } {
    if (agentIds !== null && agentIds.length === 0) return { events: [], full: false };
    const e = schema.tenantEvents;
    const where = agentIds ? and(gt(e.seq, after), inList(e.agentId, agentIds)) : gt(e.seq, after);
    const rows = this.db.select().from(e).where(where).orderBy(asc(e.seq)).limit(limit).all();
    return { events: rows.flatMap(eventsOf).filter((event) => event.seq > after), full: rows.length === limit };
  }

  /**
   * Reference rows of agent events with their data, read back from the agents that hold it. Rows that
   * still carry their data (written before issue 12) are returned as they are.
   */
  async hydrate(events: TenantEvent[]): Promise<TenantEvent[]> {
    const source = this.agentEvents;
    if (!source) return events;
    const wanted = new Map<string, number[]>();
    for (const event of events) {
      if (event.agentId === null || event.agentSeq === null || Object.keys(event.data).length > 0) continue;
      const seqs = wanted.get(event.agentId) ?? [];
      seqs.push(event.agentSeq);
      wanted.set(event.agentId, seqs);
    }
    const found = new Map<string, Record<string, unknown>>();
    await Promise.all(
      [...wanted].map(async ([agentId, seqs]) => {
        // A replay shows what it can: an agent that cannot be reached leaves its events' data empty.
        for (const [seq, data] of await this.storedData(source, agentId, seqs).catch(() => new Map())) found.set(`${agentId}:${seq}`, data);
      }),
    );
    return events.map((event) => {
      const data = event.agentId !== null && event.agentSeq !== null ? found.get(`${event.agentId}:${event.agentSeq}`) : undefined;
      return data ? { ...event, data } : event;
    });
  }

  /** The data of an agent's events at `seqs` as it stores them (one `listEvents` call per batch over their span); pruned ones are absent. */
  private async storedData(source: AgentEventSource, agentId: string, seqs: readonly number[]): Promise<Map<number, Record<string, unknown>>> {
    const found = new Map<number, Record<string, unknown>>();
    const last = Math.max(...seqs);
    let after = Math.min(...seqs) - 1;
    while (after < last) {
      const batch = await source(agentId, after, HYDRATE_BATCH);
      for (const stored of batch) found.set(stored.seq, stored.data);
      if (batch.length < HYDRATE_BATCH) break;
      after = batch[batch.length - 1]!.seq;
    }
    return found;
  }

  /**
   * Replays events after `after` (hydrated, in batches), then goes live, with the agent stream's frames and
   * heartbeat. The subscriber is registered before the replay starts and buffers what is committed meanwhile;
   * buffered events the replay already sent are dropped by seq, so none is lost or repeated.
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
    let replaying = true;
    let replayedThrough = after;
    const buffered: TenantEvent[] = [];
    const subscriber: Subscriber = {
      agentIds: agentIds ? new Set(agentIds) : null,
      push: (frame) => {
        if (!closed) writer.write(encoder.encode(frame)).catch(stop);
      },
      deliver: (events, frames) => {
        if (replaying) buffered.push(...events);
        else subscriber.push(frames.join(""));
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
    subscribers.add(subscriber);
    heartbeat = setInterval(() => subscriber.push(SSE_HEARTBEAT), config.sse.heartbeatMs);
    const replay = async () => {
      for (;;) {
        const { events: batch, full } = this.listAfter(replayedThrough, config.sse.replayBatch, agentIds);
        for (const event of await this.hydrate(batch)) subscriber.push(frameOf(event));
        if (batch.length > 0) replayedThrough = batch[batch.length - 1]!.seq;
        if (!full || closed) break;
      }
      // Synchronously from the last read on: what was committed meanwhile is in the buffer, newer than the replay or already sent.
      replaying = false;
      const missed = buffered.splice(0).filter((event) => event.seq > replayedThrough);
      if (missed.length > 0) subscriber.deliver(missed, missed.map(frameOf));
    };
    replay().catch(stop);
    return readable;
  }
}

/** An event's SSE frame: its tenant seq is the stream's event id. */
function frameOf(event: TenantEvent): string {
  return sseFrame({ id: event.seq, event: event.type, data: event });
}

function visible(agentIds: ReadonlySet<string> | null, event: TenantEvent): boolean {
  return agentIds === null || (event.agentId !== null && agentIds.has(event.agentId));
}

/** A row's events: its items under the consecutive seqs that end at the row's seq. */
function eventsOf(row: Row): TenantEvent[] {
  const first = row.seq - row.items.length + 1;
  return row.items.map(([type, agentSeq, runKey, createdAt, data], i) => ({ seq: first + i, type, agentId: row.agentId, agentSeq, runKey, data, createdAt }));
}
