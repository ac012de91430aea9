import { asc, eq, gt } from "drizzle-orm";
import { isTenantStreamEvent } from "../../../core/outbound-delivery";
import * as schema from "../../../db/agent-schema";
import type { Result } from "../../../core/result";
import type { ForwardedAgentEvent } from "../../../schema/contracts";
import type { AgentEvent } from "../../../schema/runs";
import type { AgentDb } from "../types";

/** Where forwarding stands: the highest agent event seq the tenant has acknowledged (in the DO's key/JSON table). */
const CURSOR_KEY = "tenant-stream:forwarded-seq";
const BATCH = 200;

export interface ForwarderDeps {
  db: AgentDb;
  agentId: () => string;
  /** One RPC per batch to the TenantDO (which deduplicates by `(agentId, seq)`). */
  send: (agentId: string, events: ForwardedAgentEvent[]) => Promise<Result<{ recorded: number }>>;
  waitUntil: (work: Promise<unknown>) => void;
  /** Stored rows → events as appended (stored events refer to messages and runs; ./event-refs.ts). */
  hydrate: (rows: ReadonlyArray<typeof schema.events.$inferSelect>) => AgentEvent[];
}

/**
 * Forwards the agent's persisted events to the tenant-wide log (SPEC §8) — cheaply and durably
 * enough: appends only schedule a flush; a flush (single-flight, on a macrotask, so a burst of
 * appends travels as one RPC) sends everything after a persisted cursor and advances the cursor
 * only once the tenant answered. A failed or interrupted flush is retried by the next append or
 * the next activation, and the tenant's `(agentId, seq)` dedupe makes a re-sent batch harmless:
 * at-least-once in transport, exactly-once in the tenant log.
 */
export class EventForwarder {
  private flushing: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: ForwarderDeps) {}

  /** Called for every persisted event; only stream-visible types cause a flush. */
  noteAppended(type: string): void {
    if (isTenantStreamEvent(type)) this.schedule();
  }

  schedule(): void {
    if (this.flushing) {
      this.again = true;
      return;
    }
    const flushing = new Promise((resolve) => setTimeout(resolve, 0))
      .then(() => this.flushAll())
      .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "tenant event forwarding failed", agentId: this.deps.agentId(), error: String(error) })))
      .finally(() => {
        this.flushing = null;
      });
    this.flushing = flushing;
    this.deps.waitUntil(flushing);
  }

  private async flushAll(): Promise<void> {
    do {
      this.again = false;
      await this.flushOnce();
    } while (this.again);
  }

  private async flushOnce(): Promise<void> {
    const agentId = this.deps.agentId();
    if (!agentId) return;
    const cursor = this.cursor();
    const rows = this.deps.db.select().from(schema.events).where(gt(schema.events.seq, cursor)).orderBy(asc(schema.events.seq)).limit(BATCH).all();
    if (rows.length === 0) return;
    const events = this.deps
      .hydrate(rows.filter((row) => isTenantStreamEvent(row.type)))
      .map((event): ForwardedAgentEvent => ({ seq: event.seq, type: event.type, runKey: event.runKey, data: event.data, createdAt: event.createdAt }));
    if (events.length > 0) {
      const sent = await this.deps.send(agentId, events);
      if (!sent.ok) throw new Error(`tenant refused the batch: ${sent.code}`);
    }
    this.setCursor(rows[rows.length - 1]!.seq);
    if (rows.length === BATCH) this.again = true;
  }

  private cursor(): number {
    const row = this.deps.db.select().from(schema.counters).where(eq(schema.counters.key, CURSOR_KEY)).get();
    const seq = row?.state.seq;
    return typeof seq === "number" ? seq : 0;
  }

  private setCursor(seq: number): void {
    const state = { seq };
    this.deps.db.insert(schema.counters).values({ key: CURSOR_KEY, state }).onConflictDoUpdate({ target: schema.counters.key, set: { state } }).run();
  }
}
