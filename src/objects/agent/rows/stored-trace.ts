import { H } from "../../../core/ids/hash";
import { FOLD, type FoldContext, foldEntries, modelOfEntries, type TraceEntry, unfoldEntries, usageOfEntries } from "./folded-trace";

/**
 * The id of a run's reply at a step (`runMessageIds.reply` in wakes/input.ts is this function). A run's end asks for
 * the same id several times (the reply's append, then packing its trace checks each candidate form by unpacking it),
 * and the hash is pure JavaScript: the last id computed is kept, a pure function's answer.
 */
export function replyMessageIdOf(runKey: string, step: number): string {
  if (lastReply.runKey !== runKey || lastReply.step !== step) lastReply = { runKey, step, id: H(runKey, "assistant", step) };
  return lastReply.id;
}
let lastReply: { runKey: string; step: number; id: string } = { runKey: "", step: Number.NaN, id: "" };

/** What a run row holds beside its trace: enough to restore the trace fields the lean form leaves out. */
export interface TraceRowContext extends FoldContext {
  runKey: string;
  reason: string;
  attempt: number;
}

/** Marker of the lean form: a bit per left-out group (absent on rows stored whole: older rows, or when it did not fit). */
const MARK = "~";
const REASON = 1; // `reason`, first: the row's reason column
const NO_COALESCED = 2; // `coalescedRunKeys: []`, second
const ATTEMPT = 4; // `attempt` and `resumed` (= attempt > 1), after `latencyMs` when there is one: the row's attempt column
const REPLY = 8; // `replyMessageId`, right after `resumed`: the id the run loop derives from the run key and the last step
const MODEL = 16; // `model`, right after `steps`: `provider:model` of the last attempt among the folded trace rows
const USAGE = 32; // `usage`, after `model`: the tokens of the folded usage rows, summed

/**
 * Bytes per turn: a finished run's trace repeats what its row and its run key already say — the reason,
 * the attempt, `resumed`, an empty `coalescedRunKeys` and the reply's 64-character id (about 150 bytes of every run).
 * `packRunTrace` leaves those out and `unpackRunTrace` puts them back where they were, so every reader (run views,
 * export, `run.completed` hydration, child reports) sees the trace as the run loop wrote it. The run's
 * `run_trace` rows (`entries`) are folded into it too (folded-trace.ts), and then `model` and `usage`, which those rows
 * say, are left out as well. A packed form is kept only when unpacking it reproduces the trace exactly (same keys,
 * same order, same values) and the folded rows read back exactly; otherwise the trace is stored whole, and rows that
 * cannot be folded stay in `run_trace` (the caller deletes them only when the result `isFolded`).
 */
export function packRunTrace(trace: Record<string, unknown>, row: TraceRowContext, entries: readonly TraceEntry[] = []): Record<string, unknown> {
  if (MARK in trace || FOLD in trace) return trace;
  const folded = entries.length > 0 ? foldEntries(entries, row) : null;
  const forms: Record<string, unknown>[] = [];
  if (folded) {
    const lean = leanOf(trace, row, entries);
    if (lean) forms.push({ ...lean, [FOLD]: folded });
    forms.push({ ...trace, [FOLD]: folded });
  }
  const lean = leanOf(trace, row, null);
  if (lean) forms.push(lean);
  const expected = JSON.stringify(trace);
  const expectedEntries = JSON.stringify(entries);
  for (const form of forms) {
    if (JSON.stringify(unpackRunTrace(form, row)) !== expected) continue;
    if (FOLD in form && JSON.stringify(unfoldEntries(form, row)) !== expectedEntries) continue;
    return form;
  }
  return trace;
}

/** The trace without what the row (and, with `entries`, the folded rows) say, under its bit mask; null when nothing is left out. */
function leanOf(trace: Record<string, unknown>, row: TraceRowContext, entries: readonly TraceEntry[] | null): Record<string, unknown> | null {
  if (Object.keys(trace).length === 0) return null;
  let bits = 0;
  const rest: Record<string, unknown> = {};
  const model = entries ? modelOfEntries(entries) : undefined;
  const usage = entries ? JSON.stringify(usageOfEntries(entries)) : undefined;
  for (const [key, value] of Object.entries(trace)) {
    if (key === "reason" && value === row.reason) bits |= REASON;
    else if (key === "coalescedRunKeys" && Array.isArray(value) && value.length === 0) bits |= NO_COALESCED;
    else if (key === "attempt" && value === row.attempt) bits |= ATTEMPT;
    else if (key === "resumed" && value === row.attempt > 1) continue; // restored with the attempt (checked below)
    else if (key === "replyMessageId" && typeof trace.steps === "number" && value === replyMessageIdOf(row.runKey, trace.steps - 1)) bits |= REPLY;
    else if (key === "model" && model !== undefined && value === model) bits |= MODEL;
    else if (key === "usage" && usage !== undefined && JSON.stringify(value) === usage) bits |= USAGE;
    else rest[key] = value;
  }
  return bits === 0 ? null : { [MARK]: bits, ...rest };
}

/** Whether a stored trace holds its run's trace rows (they were deleted from `run_trace` when it was stored). */
export const isFolded = (stored: Record<string, unknown>): boolean => FOLD in stored;

/**
 * The trace to store as a run ends (undefined: leave the stored one): `written` (or the stored trace) with the run's
 * `run_trace` rows folded in when they fit. Rows folded by an earlier end stay folded; newer rows that do not fit stay
 * in `run_trace` after them.
 */
export function endingTrace(row: { trace: Record<string, unknown> } & TraceRowContext, written: Record<string, unknown> | undefined, rows: readonly TraceEntry[]): Record<string, unknown> | undefined {
  if (!written && rows.length === 0) return undefined;
  const before = unfoldEntries(row.trace, row);
  const trace = written ?? unpackRunTrace(row.trace, row);
  const packed = packRunTrace(trace, row, [...before, ...rows]);
  if (isFolded(packed) || before.length === 0) return packed;
  return { ...packRunTrace(trace, row), [FOLD]: row.trace[FOLD] };
}

/** The trace as written: a lean row's left-out fields restored in their places; a whole row as it is (without folded rows). */
export function unpackRunTrace(stored: Record<string, unknown>, row: TraceRowContext): Record<string, unknown> {
  const bits = stored[MARK];
  if (typeof bits !== "number") {
    if (!(FOLD in stored)) return stored;
    const { [FOLD]: _folded, ...whole } = stored;
    return whole;
  }
  const entries = bits & (MODEL | USAGE) ? unfoldEntries(stored, row) : [];
  const out: Record<string, unknown> = {};
  if (bits & REASON) out.reason = row.reason;
  if (bits & NO_COALESCED) out.coalescedRunKeys = [];
  const modelAndUsage = () => {
    if (bits & MODEL) out.model = modelOfEntries(entries);
    if (bits & USAGE) out.usage = usageOfEntries(entries);
  };
  if (!("steps" in stored)) modelAndUsage();
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
    if (key === MARK || key === FOLD) continue;
    out[key] = value;
    if (key === "steps") modelAndUsage();
    if (key === "latencyMs" && !placed) {
      attemptAndReply();
      placed = true;
    }
  }
  return out;
}
