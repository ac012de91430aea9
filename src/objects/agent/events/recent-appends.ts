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
 * final when appended: ./event-refs.ts); an event with a text SQLite stores differently (a lone surrogate) is not kept.
 * Test deployments compare every kept event with a fresh hydration.
 */
export class RecentAppends {
  private readonly bySeq = new Map<number, AgentEvent>();

  keep(event: AgentEvent): void {
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

  forget(): void {
    this.bySeq.clear();
  }
}

/** No string in `value` that SQLite would store differently (the messages' text column; JSON columns escape). */
function storedAsIs(value: unknown): boolean {
  if (typeof value === "string") return !hasLoneSurrogate(value);
  if (value === null || typeof value !== "object") return true;
  return Object.values(value).every(storedAsIs);
}
