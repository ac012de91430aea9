import { sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentEvent } from "../../../schema/agents/runs";
import { messageRow, toMessage, toRun } from "../rows";
import type { AgentDb } from "../types";
import type { StoredEvent } from "./stored-events";

/**
 * Stored events refer to what the agent already holds instead of copying it (issue 12 §5): a
 * `message.appended` stores the message id, a `run.completed` / `run.failed` refers to the run by
 * its key. Both rows are immutable once the event is written (messages never change; a run's row is
 * final when it ends), so hydrating on read gives exactly the event that was appended, key order
 * included. And a `data.runKey` that leads the data and equals the row's `run_key` column is not
 * stored twice. Events stored before this (full copies) carry no marker and read unchanged.
 */
const REF = "$ref";
/** Marker: the data began with `runKey`, equal to the row's run_key column. */
const RUN_KEY = "$runKey";

interface EventRef {
  /** The key the hydrated record goes back under (last, as it was appended). */
  key: "message" | "run";
  id: string;
}

type EventRow = StoredEvent;

/** What is stored for an event's data: the data minus what the row or the agent's tables already hold. */
export function storedEventData(type: string, runKey: string | null, data: Record<string, unknown>): Record<string, unknown> {
  let stored = data;
  if (type === "message.appended") {
    const { message, ...rest } = data as { message?: { id?: unknown } };
    if (typeof message?.id === "string" && Object.keys(rest).length === 0) return { [REF]: `message:${message.id}` };
  }
  if (type === "run.completed" || type === "run.failed") {
    const { run, ...rest } = data as { run?: { runKey?: unknown } };
    // "run" alone: the run is the row's own runKey (the usual case).
    if (typeof run?.runKey === "string" && Object.keys(data).at(-1) === "run") stored = { ...rest, [REF]: run.runKey === runKey ? "run" : `run:${run.runKey}` };
  }
  if (runKey !== null && Object.keys(stored)[0] === "runKey" && stored.runKey === runKey) {
    const { runKey: _same, ...rest } = stored;
    stored = { [RUN_KEY]: 1, ...rest };
  }
  return stored;
}

/** `"message:<id>"`, `"run:<runKey>"`, or `"run"` for the row's own runKey (a string: the reference is the row's whole cost). */
function refOf(row: EventRow): EventRef | null {
  const ref = row.data[REF];
  if (typeof ref !== "string") return null;
  if (ref === "run") return row.runKey === null ? null : { key: "run", id: row.runKey };
  const colon = ref.indexOf(":");
  const key = ref.slice(0, colon);
  return key === "message" || key === "run" ? { key, id: ref.slice(colon + 1) } : null;
}

const among = (column: typeof schema.messages.id | typeof schema.runs.runKey, ids: string[]) => sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;

/** Rows → public events, resolving references with one indexed read per kind per batch. */
export function hydrateEvents(db: AgentDb, agentId: string, rows: readonly EventRow[]): AgentEvent[] {
  const messageIds: string[] = [];
  const runKeys: string[] = [];
  for (const row of rows) {
    const ref = refOf(row);
    if (ref?.key === "message") messageIds.push(ref.id);
    else if (ref?.key === "run") runKeys.push(ref.id);
  }
  const messages = new Map<string, unknown>();
  if (messageIds.length > 0) {
    for (const m of db.select(messageRow).from(schema.messages).where(among(schema.messages.id, messageIds)).all()) messages.set(m.id, toMessage(agentId, m));
  }
  const runs = new Map<string, unknown>();
  if (runKeys.length > 0) {
    for (const r of db.select().from(schema.runs).where(among(schema.runs.runKey, runKeys)).all()) runs.set(r.runKey, toRun(r));
  }
  return rows.map((row) => {
    const ref = refOf(row);
    const sameRunKey = row.data[RUN_KEY] === 1;
    if (!ref && !sameRunKey) return { seq: row.seq, type: row.type, runKey: row.runKey, data: row.data, createdAt: row.createdAt };
    const { [REF]: _ref, [RUN_KEY]: _runKey, ...rest } = row.data;
    const data: Record<string, unknown> = sameRunKey ? { runKey: row.runKey, ...rest } : rest;
    // A referenced row is never deleted on its own (erasure deletes the events with it); null if it ever were.
    if (ref) data[ref.key] = (ref.key === "message" ? messages : runs).get(ref.id) ?? null;
    return { seq: row.seq, type: row.type, runKey: row.runKey, data, createdAt: row.createdAt };
  });
}
