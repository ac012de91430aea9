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
