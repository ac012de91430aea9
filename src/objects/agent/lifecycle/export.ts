import { asc, getTableColumns, gt } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../../db/agent-schema";
import { nowIso } from "../../shared/sqlite";
import type { AgentProfile } from "./profile";
import { eventsOfRow, hydrateEvents } from "../events";
import { toMessage, toRun, messageRow } from "../rows";
import type { AgentDb } from "../types";

const PAGE_SIZE = 200;

type Key = string | number;
interface Section {
  name: string;
  table: SQLiteTable;
  key: SQLiteColumn;
  /** The selection, when a column is read through an expression (messages' resolved `prevMessageId`). */
  columns?: Record<string, unknown>;
  map?: (row: any, agentId: string) => unknown;
  /** A whole page at once (events resolve their message / run references with one read per page). */
  mapPage?: (db: AgentDb, rows: any[], agentId: string) => unknown[];
}

const SECTIONS: Section[] = [
  { name: "messages", table: schema.messages, key: schema.messages.seq, columns: messageRow, map: (row, agentId) => ({ seq: row.seq, ...toMessage(agentId, row) }) },
  { name: "runs", table: schema.runs, key: schema.runs.runKey, map: (row) => toRun(row) },
  { name: "wakeInbox", table: schema.wakeInbox, key: schema.wakeInbox.seq },
  { name: "events", table: schema.events, key: schema.events.seq, mapPage: (db, rows, agentId) => hydrateEvents(db, agentId, rows.flatMap(eventsOfRow)) },
  { name: "actions", table: schema.actions, key: schema.actions.operationId },
  { name: "timers", table: schema.timers, key: schema.timers.id },
  { name: "schedulerDecisions", table: schema.schedulerDecisions, key: schema.schedulerDecisions.seq },
  { name: "reports", table: schema.reports, key: schema.reports.id },
  { name: "reportHeads", table: schema.reportHeads, key: schema.reportHeads.scope },
  // Memory (SPEC §7): summary span links, compaction jobs, per-thread pointers, diagnostics.
  { name: "summaries", table: schema.summaries, key: schema.summaries.messageId },
  { name: "compactionJobs", table: schema.compactionJobs, key: schema.compactionJobs.id },
  { name: "threadMemory", table: schema.threadMemory, key: schema.threadMemory.threadId },
  { name: "memoryDiagnostics", table: schema.memoryDiagnostics, key: schema.memoryDiagnostics.seq },
  // Interactive sessions (SPEC §3): open/closed, last activity, inactivity deadline.
  { name: "sessions", table: schema.sessions, key: schema.sessions.sessionId },
];

/**
 * Everything the agent holds as one JSON document, produced lazily: each pull reads one keyset
 * page of one table, so no section (messages above all) is ever loaded whole. Pages are read as
 * the client consumes them, so rows written meanwhile may or may not appear.
 */
export function exportStream(db: AgentDb, profile: AgentProfile): ReadableStream<Uint8Array> {
  const chunks = exportChunks(db, profile);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    cancel() {
      chunks.return(undefined);
    },
  });
}

function* exportChunks(db: AgentDb, profile: AgentProfile): Generator<string, void, undefined> {
  const agent = profile.get();
  const agentId = agent?.id ?? "";
  yield `{"formatVersion":1,"exportedAt":${JSON.stringify(nowIso())},"agent":${JSON.stringify(agent)},"state":${JSON.stringify(profile.state())}`;
  for (const section of SECTIONS) {
    yield `,${JSON.stringify(section.name)}:[`;
    let after: Key | undefined;
    let first = true;
    for (;;) {
      const rows = (section.columns ? db.select(section.columns as any) : db.select())
        .from(section.table)
        .where(after === undefined ? undefined : gt(section.key, after))
        .orderBy(asc(section.key))
        .limit(PAGE_SIZE)
        .all() as Array<Record<string, unknown>>;
      if (rows.length === 0) break;
      const mapped = section.mapPage ? section.mapPage(db, rows, agentId) : rows.map((row) => (section.map ? section.map(row, agentId) : row));
      const body = mapped.map((row) => JSON.stringify(row)).join(",");
      yield (first ? "" : ",") + body;
      first = false;
      after = rows[rows.length - 1]![keyProp(section)] as Key;
      if (rows.length < PAGE_SIZE) break;
    }
    yield "]";
  }
  yield "}";
}

/** The row property (camelCase) that holds the section's key column. */
function keyProp(section: Section): string {
  const columns = getTableColumns(section.table) as Record<string, SQLiteColumn>;
  return Object.keys(columns).find((prop) => columns[prop] === section.key) ?? section.key.name;
}
