import type { InferSelectModel } from "drizzle-orm";
import type * as schema from "../../../db/agent-schema";
import { hasLoneSurrogate } from "../../../core/memory/memory-policy";
import type { AgentEvent } from "../../../schema/agents/runs";

/** At most this many appended events are kept (a run appends a handful; the forwarder drops what the tenant took). */
export const MAX_RECENT_APPENDS = 128;

/**
 * The events this instance appended and the tenant has not acknowledged yet, as appended (issue 12 §7, session 14):
 * the run's report hydrates them from here instead of reading back the messages and the run they refer to — two reads
 * on every report, on a cold wake's path too. Exact: a stored row is used only with the very append that wrote it —
 * same seq, type, run and creation time (an append rolled back by its caller's transaction leaves its seq unstored;
 * the next append that takes the seq replaces the entry). Appended events are immutable (their messages and runs are
 * final when appended: ./event-refs.ts); an event whose referenced record has a text SQLite stores differently (a lone
 * surrogate) is not kept.
 * Test deployments compare every kept event with a fresh hydration.
 */
export class RecentAppends {
  private readonly bySeq = new Map<number, AgentEvent>();
  /** The highest seq this instance appended (kept or not), 0 before its first append. */
  private newest = 0;
  /** The seq of this instance's first append (0 before it): every stored event below it an earlier instance wrote. */
  private first = 0;

  keep(event: AgentEvent): void {
    this.newest = Math.max(this.newest, event.seq);
    if (this.first === 0 || event.seq < this.first) this.first = event.seq;
    if (!storedAsIs(event.data)) return void this.bySeq.delete(event.seq);
    this.bySeq.set(event.seq, event);
    if (this.bySeq.size > MAX_RECENT_APPENDS) this.bySeq.delete(this.bySeq.keys().next().value!);
  }

  /** The append that wrote `row`, when kept. */
  of(row: InferSelectModel<typeof schema.events>): AgentEvent | undefined {
    const event = this.bySeq.get(row.seq);
    return event && event.type === row.type && event.runKey === row.runKey && event.createdAt === row.createdAt ? event : undefined;
  }

  /** The tenant acknowledged the log through `seq`: those are not hydrated for it again. */
  dropThrough(seq: number): void {
    for (const kept of this.bySeq.keys()) {
      if (kept > seq) break;
      this.bySeq.delete(kept);
    }
  }

  /**
   * Every stored event after `after`, as appended, when this instance holds them all (session 15: the run's report
   * read them back first, one statement of its own on a cold wake): its appends run from `after + 1` through its
   * newest one without a gap. Events after `after` that an earlier instance stored come before this instance's first
   * append, so they leave a gap; so does an append not kept. Null when not all are held. A transaction that rolled
   * back may have taken a seq it did not store: the log forgets everything then (`EventLog`).
   */
  after(after: number): AgentEvent[] | null {
    if (this.newest <= after || this.newest - after > this.bySeq.size) return null;
    const events: AgentEvent[] = [];
    for (let seq = after + 1; seq <= this.newest; seq++) {
      const event = this.bySeq.get(seq);
      if (!event) return null;
      events.push(event);
    }
    return events;
  }

  /** Whether a stored event at `seq` was appended by an earlier instance (before this one's first append). */
  appendedEarlier(seq: number): boolean {
    return this.first === 0 || seq < this.first;
  }

  /** Whether this instance has appended and its first append came after `seq`: every event up to `seq` was stored before. */
  firstAppendAfter(seq: number): boolean {
    return this.first !== 0 && seq < this.first;
  }

  /** Drops every kept append; what this instance appended first stays known (an earlier instance's events stay so). */
  forget(): void {
    this.bySeq.clear();
    this.newest = 0;
  }
}

/** What hydration reads back instead of a kept event: the message or run a stored event refers to (./event-refs.ts). */
const REFERENCED = ["message", "run"] as const;

/**
 * Whether hydration would give back exactly what was appended. Only the referenced record is read back; its top-level
 * strings are TEXT columns, where a lone surrogate reads back as U+FFFD, while its nested values and the rest of the
 * event are stored as JSON, which escapes it and round-trips. So only those strings are looked at (a run's trace or a
 * message's content is not walked on every append).
 */
function storedAsIs(data: Record<string, unknown>): boolean {
  for (const key of REFERENCED) {
    const record = data[key];
    if (record !== null && typeof record === "object" && Object.values(record).some((value) => typeof value === "string" && hasLoneSurrogate(value))) return false;
  }
  return true;
}
