/** One row of a run's trace as readers see it (the `run_trace` table's kind, data and created_at). */
export interface TraceEntry {
  kind: string;
  data: Record<string, unknown>;
  createdAt: string;
}

/** What a run row says that a folded entry is stored relative to (its enqueueing: always stored in full). */
export interface FoldContext {
  enqueuedAt?: string | undefined;
}

/** The key of a finished run's stored trace that holds its folded trace rows. */
export const FOLD = "#";

const CODES: Record<string, string> = { attempt: "a", usage: "u", policy: "p", saga: "s" };
const KINDS: Record<string, string> = { a: "attempt", u: "usage", p: "policy", s: "saga" };
/** A usage entry whose provider, model and step are the previous entry's (the attempt it metered). */
const INHERITING_USAGE = "U";
const INHERITED = ["provider", "model", "step"] as const;
/** An attempt entry whose `status` is null, right after its `outcome` (every attempt that got no HTTP status). */
const ATTEMPT_WITHOUT_STATUS = "A";

type Folded = [code: string, data: Record<string, unknown>, at: number | string];

const baseMs = (row: FoldContext): number => Date.parse(row.enqueuedAt ?? "");

/**
 * Bytes per turn: once a run has ended, its `run_trace` rows are folded into its run row as
 * `[code, data, at]` triples under `"#"`: each row stored on its own repeated the 64-character run key, a seq, the kind
 * and a 24-byte timestamp. `code` is a letter per kind; `at` is milliseconds after the run was enqueued, or the
 * timestamp itself when that would not give back the same string; a usage entry that repeats the provider, model and
 * step of the entry before it (the attempt it metered) leaves them out (`"U"`), an attempt leaves out `status: null` (`"A"`).
 * Returns null when some entry would not read back exactly as it is (the rows then stay in `run_trace`).
 */
export function foldEntries(entries: readonly TraceEntry[], row: FoldContext): Folded[] | null {
  const base = baseMs(row);
  const out: Folded[] = [];
  let previous: TraceEntry | null = null;
  for (const entry of entries) {
    const ms = Date.parse(entry.createdAt);
    const at = Number.isFinite(base) && Number.isFinite(ms) && new Date(base + (ms - base)).toISOString() === entry.createdAt ? ms - base : entry.createdAt;
    // `at` reads back as `entry.createdAt` by construction (checked just above, or the string itself), so the checks
    // below unfold with that time instead of formatting it again, and the entry is serialized once.
    const expected = JSON.stringify(entry);
    const readsBack = (candidate: Folded) => JSON.stringify(unfoldAt(candidate, entry.createdAt, previous)) === expected;
    let folded: Folded = [CODES[entry.kind] ?? entry.kind, entry.data, at];
    if (entry.kind === "attempt" && entry.data.status === null) {
      const { status: _null, ...lean } = entry.data;
      const candidate: Folded = [ATTEMPT_WITHOUT_STATUS, lean, at];
      if (readsBack(candidate)) folded = candidate;
    }
    if (entry.kind === "usage" && previous) {
      const lean = Object.fromEntries(Object.entries(entry.data).filter(([key]) => !(INHERITED as readonly string[]).includes(key)));
      const candidate: Folded = [INHERITING_USAGE, lean, at];
      if (readsBack(candidate)) folded = candidate;
    }
    if (!readsBack(folded)) return null;
    out.push(folded);
    previous = entry;
  }
  return out;
}

/** The folded entries of a stored trace, as the rows they were (none when the trace holds no `"#"`). */
export function unfoldEntries(stored: Record<string, unknown>, row: FoldContext): TraceEntry[] {
  const folded = stored[FOLD];
  if (!Array.isArray(folded)) return [];
  const base = baseMs(row);
  const out: TraceEntry[] = [];
  for (const item of folded as Folded[]) out.push(unfoldOne(item, base, out.at(-1) ?? null));
  return out;
}

function unfoldOne(folded: Folded, base: number, previous: TraceEntry | null): TraceEntry {
  const at = folded[2];
  return unfoldAt(folded, typeof at === "number" ? new Date(base + at).toISOString() : at, previous);
}

/** A folded entry as the row it was, its time already read back (`createdAt`). */
function unfoldAt([code, data]: Folded, createdAt: string, previous: TraceEntry | null): TraceEntry {
  if (code === INHERITING_USAGE && previous) {
    const inherited = (key: (typeof INHERITED)[number]) => (previous.data[key] === undefined ? {} : { [key]: previous.data[key] });
    return { kind: "usage", data: { ...inherited("provider"), ...inherited("model"), ...data, ...inherited("step") }, createdAt };
  }
  if (code === ATTEMPT_WITHOUT_STATUS) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      out[key] = value;
      if (key === "outcome") out.status = null;
    }
    return { kind: "attempt", data: out, createdAt };
  }
  return { kind: KINDS[code] ?? code, data, createdAt };
}

/** `provider:model` of the last provider attempt, the model a run's trace names (undefined without attempts). */
export function modelOfEntries(entries: readonly TraceEntry[]): string | undefined {
  const last = entries.filter((entry) => entry.kind === "attempt").at(-1);
  return last && typeof last.data.provider === "string" && typeof last.data.model === "string" ? `${last.data.provider}:${last.data.model}` : undefined;
}

/** The tokens of the run's usage entries, summed as the run loop sums its steps' usage. */
export function usageOfEntries(entries: readonly TraceEntry[]): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const entry of entries) {
    if (entry.kind !== "usage") continue;
    inputTokens += typeof entry.data.inputTokens === "number" ? entry.data.inputTokens : 0;
    outputTokens += typeof entry.data.outputTokens === "number" ? entry.data.outputTokens : 0;
  }
  return { inputTokens, outputTokens };
}
