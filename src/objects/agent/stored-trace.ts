import { H } from "../../core/ids/hash";

/** The id of a run's reply at a step (`runMessageIds.reply` in wakes/input.ts is this function). */
export const replyMessageIdOf = (runKey: string, step: number): string => H(runKey, "assistant", step);

/** What a run row holds beside its trace: enough to restore the trace fields the lean form leaves out. */
export interface TraceRowContext {
  runKey: string;
  reason: string;
  attempt: number;
}

/** Marker of the lean form: a bit per left-out group (absent on rows stored whole, before issue 12 §6 or when it did not fit). */
const MARK = "~";
const REASON = 1; // `reason`, first: the row's reason column
const NO_COALESCED = 2; // `coalescedRunKeys: []`, second
const ATTEMPT = 4; // `attempt` and `resumed` (= attempt > 1), after `latencyMs` when there is one: the row's attempt column
const REPLY = 8; // `replyMessageId`, right after `resumed`: the id the run loop derives from the run key and the last step

/**
 * Issue 12 §6 (bytes per turn): a finished run's trace repeats what its row and its run key already say — the reason,
 * the attempt, `resumed`, an empty `coalescedRunKeys` and the reply's 64-character id (about 150 bytes of every run).
 * `packRunTrace` leaves those out and `unpackRunTrace` puts them back where they were, so every reader (run views,
 * export, `run.completed` hydration, child reports) sees the trace as the run loop wrote it. The packed form is kept only
 * when unpacking it reproduces the trace exactly (same keys, same order, same values); otherwise the trace is stored whole.
 */
export function packRunTrace(trace: Record<string, unknown>, row: TraceRowContext): Record<string, unknown> {
  const keys = Object.keys(trace);
  if (keys.length === 0 || MARK in trace) return trace;
  let bits = 0;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(trace)) {
    if (key === "reason" && value === row.reason) bits |= REASON;
    else if (key === "coalescedRunKeys" && Array.isArray(value) && value.length === 0) bits |= NO_COALESCED;
    else if (key === "attempt" && value === row.attempt) bits |= ATTEMPT;
    else if (key === "resumed" && value === row.attempt > 1) continue; // restored with the attempt (checked below)
    else if (key === "replyMessageId" && typeof trace.steps === "number" && value === replyMessageIdOf(row.runKey, trace.steps - 1)) bits |= REPLY;
    else rest[key] = value;
  }
  if (bits === 0) return trace;
  const packed = { [MARK]: bits, ...rest };
  return JSON.stringify(unpackRunTrace(packed, row)) === JSON.stringify(trace) ? packed : trace;
}

/** The trace as written: a lean row's left-out fields restored in their places; a whole row as it is. */
export function unpackRunTrace(stored: Record<string, unknown>, row: TraceRowContext): Record<string, unknown> {
  const bits = stored[MARK];
  if (typeof bits !== "number") return stored;
  const out: Record<string, unknown> = {};
  if (bits & REASON) out.reason = row.reason;
  if (bits & NO_COALESCED) out.coalescedRunKeys = [];
  const attemptAndReply = () => {
    if (bits & ATTEMPT) {
      out.attempt = row.attempt;
      out.resumed = row.attempt > 1;
    }
    if (bits & REPLY && typeof stored.steps === "number") out.replyMessageId = replyMessageIdOf(row.runKey, stored.steps - 1);
  };
  let placed = !("latencyMs" in stored);
  if (placed) attemptAndReply();
  for (const [key, value] of Object.entries(stored)) {
    if (key === MARK) continue;
    out[key] = value;
    if (key === "latencyMs" && !placed) {
      attemptAndReply();
      placed = true;
    }
  }
  return out;
}
