/**
 * Deterministic ranking for `resolve_task_reference` (seed 000 §4.4: ambiguous targets never
 * auto-write). Criteria, strongest first: exact id (1.0), exact title (0.95), title starting with
 * the reference (0.75–0.85), shared words (0.1–0.7); ties break on recency (`updatedAt`, newest
 * first), then id. Titles and references are compared NFKC-normalised, case-folded, with runs of
 * whitespace collapsed; words are runs of letters and digits minus a few filler words ("the",
 * "task", …), and two words match when equal or when one (of 4+ characters) starts the other.
 */
export interface TaskReferenceCandidate {
  id: string;
  title: string;
  status: string;
  categoryId: string | null;
  updatedAt: string;
}

export type ReferenceMatch = "exact_id" | "exact_title" | "prefix" | "token_overlap";

export interface RankedTaskReference {
  taskId: string;
  title: string;
  categoryId: string | null;
  status: string;
  score: number;
  match: ReferenceMatch;
  reason: string;
}

/** Below this gap to the best candidate, a second candidate makes the reference ambiguous. */
export const AMBIGUITY_GAP = 0.15;

const FILLER = new Set(["a", "an", "the", "my", "our", "this", "that", "task", "todo", "to", "of", "for", "on", "in", "and", "with"]);

export function normalizeReference(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim().replace(/^["'“‘]+|["'”’]+$/g, "").trim();
}

export function referenceWords(text: string): string[] {
  const words = normalizeReference(text).match(/[\p{L}\p{N}]+/gu) ?? [];
  const meaningful = words.filter((word) => !FILLER.has(word));
  return [...new Set(meaningful.length > 0 ? meaningful : words)];
}

const wordsMatch = (a: string, b: string) => a === b || (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a)));
const round = (score: number) => Math.round(score * 10_000) / 10_000;

/** How `task` matches `reference`, or null when it does not. */
export function matchTaskReference(reference: string, task: TaskReferenceCandidate): Omit<RankedTaskReference, "taskId" | "title" | "categoryId" | "status"> | null {
  if (reference.trim() === task.id) return { score: 1, match: "exact_id", reason: "exact id" };
  const ref = normalizeReference(reference);
  const title = normalizeReference(task.title);
  if (ref.length === 0) return null;
  if (ref === title) return { score: 0.95, match: "exact_title", reason: "exact title" };
  if (title.startsWith(ref)) return { score: round(0.75 + 0.1 * (ref.length / title.length)), match: "prefix", reason: "title starts with the reference" };
  const refWords = referenceWords(reference);
  const titleWords = referenceWords(task.title);
  const shared = refWords.filter((word) => titleWords.some((other) => wordsMatch(word, other)));
  if (shared.length === 0) return null;
  const coverage = shared.length / refWords.length;
  const jaccard = shared.length / (refWords.length + titleWords.length - shared.length);
  return {
    score: round(Math.min(0.7, 0.1 + 0.5 * coverage + 0.1 * jaccard)),
    match: "token_overlap",
    reason: `shares ${shared.length} of ${refWords.length} words (${shared.join(", ")})`,
  };
}

/** Ranked candidates (at most `limit`) and whether the reference is ambiguous among them. */
export function rankTaskReferences(reference: string, tasks: readonly TaskReferenceCandidate[], limit: number): { candidates: RankedTaskReference[]; ambiguous: boolean } {
  const ranked: RankedTaskReference[] = [];
  const byId = new Map(tasks.map((task) => [task.id, task]));
  for (const task of byId.values()) {
    const match = matchTaskReference(reference, task);
    if (match) ranked.push({ taskId: task.id, title: task.title, categoryId: task.categoryId, status: task.status, ...match });
  }
  const updatedAt = (id: string) => byId.get(id)?.updatedAt ?? "";
  ranked.sort((a, b) => b.score - a.score || compare(updatedAt(b.taskId), updatedAt(a.taskId)) || compare(a.taskId, b.taskId));
  const candidates = ranked.slice(0, Math.max(0, limit));
  return { candidates, ambiguous: isAmbiguous(candidates) };
}

/**
 * Not ambiguous: no or one candidate; the best is an exact id; the best is the only exact title;
 * or every other candidate scores at least AMBIGUITY_GAP below the best.
 */
export function isAmbiguous(candidates: readonly RankedTaskReference[]): boolean {
  const [top, second] = candidates;
  if (!top || !second) return false;
  if (top.match === "exact_id") return false;
  if (top.match === "exact_title") return second.match === "exact_title";
  return second.score > top.score - AMBIGUITY_GAP;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
