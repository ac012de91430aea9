import type { InferSelectModel } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentEvent } from "../../../schema/runs";
import { inList } from "../../shared/sql-in";
import { toMessage, toRun } from "../records";
import type { AgentDb } from "../types";

/**
 * Stored events refer to what the agent already holds instead of copying it (issue 12 §5): a
 * `message.appended` stores the message id, a `run.completed` / `run.failed` the run's key. Both
 * rows are immutable once the event is written (messages never change; a run's row is final when
 * it ends), so hydrating on read gives exactly the event that was appended. The reference lives
 * under one reserved key; events stored before this (full copies) carry none and read unchanged.
 */
const REF = "$ref";

interface EventRef {
  /** The key the hydrated record goes back under (last, as it was appended). */
  key: "message" | "run";
  id: string;
}

type EventRow = InferSelectModel<typeof schema.events>;

/** What is stored for an event's data: the data itself, or the data minus the record it refers to. */
export function storedEventData(type: string, data: Record<string, unknown>): Record<string, unknown> {
  if (type === "message.appended") {
    const { message, ...rest } = data as { message?: { id?: unknown } };
    if (typeof message?.id === "string" && Object.keys(rest).length === 0) return { [REF]: `message:${message.id}` };
  }
  if (type === "run.completed" || type === "run.failed") {
    const { run, ...rest } = data as { run?: { runKey?: unknown } };
    if (typeof run?.runKey === "string" && Object.keys(data).at(-1) === "run") return { ...rest, [REF]: `run:${run.runKey}` };
  }
  return data;
}

/** `"message:<id>"` / `"run:<runKey>"` (a string: the reference is the whole cost of the stored row). */
function refOf(data: Record<string, unknown>): EventRef | null {
  const ref = data[REF];
  if (typeof ref !== "string") return null;
  const colon = ref.indexOf(":");
  const key = ref.slice(0, colon);
  return key === "message" || key === "run" ? { key, id: ref.slice(colon + 1) } : null;
}

/** Rows → public events, resolving references with one indexed read per kind per batch. */
export function hydrateEvents(db: AgentDb, agentId: string, rows: readonly EventRow[]): AgentEvent[] {
  const messageIds: string[] = [];
  const runKeys: string[] = [];
  for (const row of rows) {
    const ref = refOf(row.data);
    if (ref?.key === "message") messageIds.push(ref.id);
    else if (ref?.key === "run") runKeys.push(ref.id);
  }
  const messages = new Map<string, unknown>();
  if (messageIds.length > 0) {
    for (const m of db.select().from(schema.messages).where(inList(schema.messages.id, messageIds)).all()) messages.set(m.id, toMessage(agentId, m));
  }
  const runs = new Map<string, unknown>();
  if (runKeys.length > 0) {
    for (const r of db.select().from(schema.runs).where(inList(schema.runs.runKey, runKeys)).all()) runs.set(r.runKey, toRun(r));
  }
  return rows.map((row) => {
    const ref = refOf(row.data);
    if (!ref) return { seq: row.seq, type: row.type, runKey: row.runKey, data: row.data, createdAt: row.createdAt };
    const { [REF]: _ref, ...rest } = row.data;
    // A referenced row is never deleted on its own (erasure deletes the events with it); null if it ever were.
    const record = (ref.key === "message" ? messages : runs).get(ref.id) ?? null;
    return { seq: row.seq, type: row.type, runKey: row.runKey, data: { ...rest, [ref.key]: record }, createdAt: row.createdAt };
  });
}
