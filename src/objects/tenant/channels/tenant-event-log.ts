import { and, asc, gt, sql } from "drizzle-orm";
import type { ForwardedAgentEvent } from "../../../schema/contracts";
import { config } from "../../../config";
import { SSE_HEARTBEAT, sseFrame } from "../../../core/runtime/sse";
import * as schema from "../../../db/tenant-schema";
import type { TenantEvent } from "../../../schema/admin/outbound-webhooks";
import { nowIso } from "../../shared/sqlite";
import { inList } from "../../shared/statements/sql-in";
import { rawStatement, type RawStatement } from "../../shared/statements/lean-query";
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

/** Agent events per insert statement: a run's report holds a handful; a longer batch goes in chunks. */
const INSERT_CHUNK = 8;

/** Agent events read per hydration call. */
const HYDRATE_BATCH = 500;

const encoder = new TextEncoder();

/**
 * The tenant-wide event log behind `GET /v1/events/stream` (SPEC §8): agents' events, forwarded in
 * batches and deduplicated by `(agentId, agentSeq)` so a re-sent batch adds nothing, and tenant-level
 * events. Appends happen inside the caller's transaction (with the webhook deliveries they cause);
 * the caller fans the returned events out once it has committed.
 *
 * Issue 12 §5: an agent event is stored as a reference (agent, agent seq, type, run key, time) without a
 * second copy of its data, which the agent already holds. Live subscribers and outbound webhooks get the
 * data as forwarded; a replay hydrates it from the agent (one `listEvents` call per agent and batch). An
 * agent event the agent has already pruned replays with `data: {}`.
 */
export class TenantEventLog {
  private readonly subscribers = new Set<Subscriber>();

  /** Every run report inserts its events (issue 12 §8): one statement per row count up to INSERT_CHUNK, rendered once each. */
  private readonly insertAgentEvents: Array<RawStatement<{ seq: number; agentSeq: number }>> = [];

  constructor(
    private readonly db: TenantDb,
    private readonly agentEvents?: AgentEventSource,
  ) {}

  /** The insert of `n` rows (1 ≤ n ≤ INSERT_CHUNK); a row already present (same agent and agent seq) is skipped. */
  private insertOf(n: number): RawStatement<{ seq: number; agentSeq: number }> {
    const built = this.insertAgentEvents[n];
    if (built) return built;
    const p = sql.placeholder;
    const values = Array.from({ length: n }, (_, i) => sql`(${p(`type${i}`)}, ${p("agentId")}, ${p(`seq${i}`)}, ${p(`runKey${i}`)}, ${p(`data${i}`)}, ${p(`createdAt${i}`)})`);
    return (this.insertAgentEvents[n] = rawStatement(
      this.db,
      sql`INSERT INTO tenant_events (type, agent_id, agent_seq, run_key, data, created_at) VALUES ${sql.join(values, sql`, `)} ON CONFLICT DO NOTHING RETURNING seq, agent_seq AS agentSeq`,
    ));
  }

  /**
   * Records the events not seen before, in agent order; returns only the new ones. A statement per INSERT_CHUNK rows
   * (issue 12 §8: it was one insert per event; session 15: rows as values, not one JSON parameter unpacked in SQL,
   * which cost more than the insert), in agent-seq order so the tenant seqs follow it; a row already present (same
   * agent and agent seq: a re-sent batch) is skipped by the unique index.
   */
  appendAgentEvents(agentId: string, events: readonly ForwardedAgentEvent[]): TenantEvent[] {
    if (events.length === 0) return [];
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    const inserted: Array<{ seq: number; agentSeq: number }> = [];
    // Runs inside the caller's transaction: a Durable Object has one SQLite connection.
    for (let from = 0; from < sorted.length; from += INSERT_CHUNK) {
      const chunk = sorted.slice(from, from + INSERT_CHUNK);
      const values: Record<string, unknown> = { agentId };
      chunk.forEach((event, i) => {
        values[`type${i}`] = event.type;
        values[`seq${i}`] = event.seq;
        values[`runKey${i}`] = event.runKey;
        values[`data${i}`] = JSON.stringify(this.agentEvents ? {} : event.data);
        values[`createdAt${i}`] = event.createdAt;
      });
      inserted.push(...this.insertOf(chunk.length).all(values));
    }
    const bySeq = new Map<number, ForwardedAgentEvent>();
    for (const event of sorted) if (!bySeq.has(event.seq)) bySeq.set(event.seq, event);
    // RETURNING order is unspecified in SQLite: the tenant seqs give the insertion order back.
    return inserted
      .sort((a, b) => a.seq - b.seq)
      .map(({ seq, agentSeq }) => {
        const event = bySeq.get(agentSeq)!;
        return { seq, type: event.type, agentId, agentSeq, runKey: event.runKey, data: event.data, createdAt: event.createdAt };
      });
  }

  /** A tenant-level event (a decision resolved, a brake): no agent seq, so never deduplicated. */
  appendTenantEvent(tx: TenantDb, type: string, agentId: string | null, runKey: string | null, data: Record<string, unknown>): TenantEvent {
    const row = tx.insert(schema.tenantEvents).values({ type, agentId, agentSeq: null, runKey, data, createdAt: nowIso() }).returning().get();
    return toTenantEvent(row);
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

  listAfter(after: number, limit: number, agentIds: readonly string[] | null = null): TenantEvent[] {
    if (agentIds !== null && agentIds.length === 0) return [];
    const e = schema.tenantEvents;
    const where = agentIds ? and(gt(e.seq, after), inList(e.agentId, agentIds)) : gt(e.seq, after);
    return this.db.select().from(e).where(where).orderBy(asc(e.seq)).limit(limit).all().map(toTenantEvent);
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
        const batch = this.listAfter(replayedThrough, config.sse.replayBatch, agentIds);
        const full = batch.length === config.sse.replayBatch;
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

function toTenantEvent(row: Row): TenantEvent {
  return { seq: row.seq, type: row.type, agentId: row.agentId, agentSeq: row.agentSeq, runKey: row.runKey, data: row.data, createdAt: row.createdAt };
}
