import { z } from "zod";
import { failure, type Result } from "../../../core/runtime/result";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import type { Message } from "../../../schema/agents/messages";
import type { Run } from "../../../schema/agents/runs";
import type { EventLog } from "../events";
import type { History } from "../memory";
import type { RunView } from "./run-view";
import type { WakeInbox } from "../wakes";
import type { AgentProfile } from "../lifecycle";

/** A page of messages; `eventSeq` is the event log position it is consistent with (read in the same turn), so a reader resumes /events there without gap or duplicate. */
export function messagePage(history: History, events: EventLog, query: { limit: number; cursor?: string | undefined; threadId?: string | undefined }): Result<Page<Message> & { eventSeq: number }> {
  const before = decodeCursor(query.cursor, z.object({ s: z.number().int() }));
  if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
  const page = history.list({ threadId: query.threadId, beforeSeq: before?.s, limit: query.limit });
  return { ok: true, data: page.data, nextCursor: page.lastSeq === null ? null : encodeCursor({ s: page.lastSeq }), eventSeq: events.headSeq() };
}

/** A page of run summaries (tool calls, trace rows and lineage filled in by the run view). */
export function runPage(inbox: WakeInbox, runView: RunView, query: { limit: number; cursor?: string | undefined }): Result<Page<Run>> {
  const before = decodeCursor(query.cursor, z.object({ e: z.string(), k: z.string() }));
  if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
  const page = inbox.listRuns(query.limit, before ? { enqueuedAt: before.e, runKey: before.k } : undefined);
  return { ok: true, data: runView.summaries(page.data), nextCursor: page.last ? encodeCursor({ e: page.last.enqueuedAt, k: page.last.runKey }) : null };
}

/** One run with its tool calls, trace and lineage; not_found while the agent or the run does not exist. */
export function runDetail(profile: AgentProfile, inbox: WakeInbox, runView: RunView, runKey: string): Result<{ run: Run }> {
  const run = profile.get() ? inbox.getRun(runKey) : null;
  return run ? { ok: true, run: runView.detail(run) } : failure("not_found", "run not found");
}
