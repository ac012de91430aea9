/**
 * Persisted compaction jobs (seed 000 §3 "Ordering and durability", seed 001 §8):
 * `(agentId, threadId, startMessageId, endMessageId, status, attemptCount, nextAttemptAt)`.
 * Status machine `pending → running → done | failed_terminal` (seed 000 test strategy); a failed attempt
 * with attempts left goes back to `pending` with a later `nextAttemptAt`, which is what the
 * `(status, next_attempt_at)` ready index selects on.
 */
import { H } from "../ids/hash";
import type { SummarySpan } from "./memory-policy";
import type { SummarizerKind } from "./summary";

export const COMPACTION_JOB_STATUSES = ["pending", "running", "done", "failed_terminal"] as const;
export type CompactionJobStatus = (typeof COMPACTION_JOB_STATUSES)[number];

/** One `agent_compaction_jobs` row; times are epoch ms (the shell converts at the edge). */
export interface CompactionJob extends SummarySpan {
  status: CompactionJobStatus;
  /** Attempts started so far (incremented on claim). */
  attemptCount: number;
  /** Epoch ms when a pending job becomes due; null once done or failed_terminal. */
  nextAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Bounded exponential backoff and the LLM → extractive fallback threshold. */
export interface CompactionRetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** From this attempt on, the deterministic extractive summarizer is used instead of the LLM. */
  fallbackFromAttempt: number;
}

/** Defaults; see docs/decisions/memory-core.md. */
export const DEFAULT_COMPACTION_RETRY_POLICY: CompactionRetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 30_000,
  maxDelayMs: 3_600_000,
  fallbackFromAttempt: 3,
};

/** Validates a policy when configured, naming the failing field. */
export function validateRetryPolicy(
  policy: CompactionRetryPolicy,
): { ok: true; policy: CompactionRetryPolicy } | { ok: false; code: "invalid_retry_policy"; field: keyof CompactionRetryPolicy; message: string } {
  const checks: Array<[keyof CompactionRetryPolicy, number]> = [
    ["maxAttempts", 1],
    ["baseDelayMs", 0],
    ["maxDelayMs", policy.baseDelayMs],
    ["fallbackFromAttempt", 1],
  ];
  for (const [field, min] of checks) {
    const value = policy[field];
    if (!Number.isInteger(value) || value < min) return { ok: false, code: "invalid_retry_policy", field, message: `${field} must be an integer >= ${min}` };
  }
  return { ok: true, policy };
}

/** Job identity: one job per span (the summary depth is implied by the span's message ids). */
export function compactionJobId(span: SummarySpan): string {
  return H(span.agentId, span.threadId, span.startMessageId, span.endMessageId);
}

/** A new job for a planned span, due now. */
export function newCompactionJob(span: SummarySpan, now: number): CompactionJob {
  return {
    agentId: span.agentId,
    threadId: span.threadId,
    startMessageId: span.startMessageId,
    endMessageId: span.endMessageId,
    summaryDepth: span.summaryDepth,
    status: "pending",
    attemptCount: 0,
    nextAttemptAt: now,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Delay before the next attempt after `attemptCount` failures: `min(maxDelay, base · 2^(attemptCount−1))`, no jitter. */
export function backoffDelayMs(attemptCount: number, policy: CompactionRetryPolicy): number {
  const exponent = Math.max(0, attemptCount - 1);
  // Cap the exponent so that 2^n never overflows into Infinity for absurd attempt counts.
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 52));
}

/** Inputs of the job state machine; `now` is epoch ms. */
export type CompactionJobEvent =
  | { type: "claim"; now: number }
  | { type: "commit"; now: number }
  | { type: "fail"; now: number; error: string }
  | { type: "requeue"; now: number };

/** The next job row, or why the event does not apply. */
export type CompactionTransition =
  | { ok: true; job: CompactionJob }
  | { ok: false; code: "invalid_transition" | "not_due"; from: CompactionJobStatus; event: CompactionJobEvent["type"] };

/**
 * The job state machine. `claim` starts an attempt of a due pending job; `fail` schedules a retry or,
 * at `maxAttempts`, ends in `failed_terminal`; `requeue` is the manual/maintenance restart of a
 * terminal failure with a fresh attempt budget.
 */
export function applyCompactionEvent(job: CompactionJob, event: CompactionJobEvent, policy: CompactionRetryPolicy): CompactionTransition {
  const reject = (code: "invalid_transition" | "not_due"): CompactionTransition => ({ ok: false, code, from: job.status, event: event.type });
  switch (event.type) {
    case "claim":
      if (job.status !== "pending") return reject("invalid_transition");
      if (job.nextAttemptAt !== null && job.nextAttemptAt > event.now) return reject("not_due");
      return { ok: true, job: { ...job, status: "running", attemptCount: job.attemptCount + 1, nextAttemptAt: null, updatedAt: event.now } };
    case "commit":
      if (job.status !== "running") return reject("invalid_transition");
      return { ok: true, job: { ...job, status: "done", nextAttemptAt: null, lastError: null, updatedAt: event.now } };
    case "fail":
      if (job.status !== "running") return reject("invalid_transition");
      if (job.attemptCount >= policy.maxAttempts) {
        return { ok: true, job: { ...job, status: "failed_terminal", nextAttemptAt: null, lastError: event.error, updatedAt: event.now } };
      }
      return {
        ok: true,
        job: { ...job, status: "pending", nextAttemptAt: event.now + backoffDelayMs(job.attemptCount, policy), lastError: event.error, updatedAt: event.now },
      };
    case "requeue":
      if (job.status !== "failed_terminal") return reject("invalid_transition");
      return { ok: true, job: { ...job, status: "pending", attemptCount: 0, nextAttemptAt: event.now, updatedAt: event.now } };
  }
}

/**
 * On activation, a job still `running` lost its attempt to an eviction or crash: count it as a
 * failure so the backoff and the attempt limit still hold.
 */
export function recoverInterruptedJob(job: CompactionJob, now: number, policy: CompactionRetryPolicy): CompactionJob {
  if (job.status !== "running") return job;
  const result = applyCompactionEvent(job, { type: "fail", now, error: "interrupted" }, policy);
  return result.ok ? result.job : job;
}

/** Whether a planned span may become a job now. */
export type CompactionAdmission =
  | { admit: true }
  | { admit: false; code: "span_exists"; status: CompactionJobStatus }
  | { admit: false; code: "thread_busy"; blockingJobId: string };

/**
 * Single-flight per `(agentId, threadId)`: a new job is admitted only if its span has no job yet and
 * no other job of the thread is pending or running. `threadJobs` are the thread's open jobs plus any
 * row for the candidate span (an indexed lookup, not the thread's history).
 */
export function admitCompactionJob(threadJobs: ReadonlyArray<CompactionJob>, candidate: SummarySpan): CompactionAdmission {
  const candidateId = compactionJobId(candidate);
  const sameSpan = threadJobs.find((job) => compactionJobId(job) === candidateId);
  if (sameSpan) return { admit: false, code: "span_exists", status: sameSpan.status };
  const blocking = threadJobs.find(
    (job) => job.agentId === candidate.agentId && job.threadId === candidate.threadId && (job.status === "pending" || job.status === "running"),
  );
  if (blocking) return { admit: false, code: "thread_busy", blockingJobId: compactionJobId(blocking) };
  return { admit: true };
}

/**
 * The jobs to claim now: due pending jobs, at most one per thread, none for a thread with a running
 * job; oldest `nextAttemptAt` first, ties by job id, so every replica picks the same ones.
 */
export function selectDueJobs(jobs: ReadonlyArray<CompactionJob>, now: number, limit: number): CompactionJob[] {
  const threadKey = (job: CompactionJob) => `${job.agentId}\u0000${job.threadId}`;
  const busy = new Set(jobs.filter((job) => job.status === "running").map(threadKey));
  const due = jobs
    .filter((job) => job.status === "pending" && (job.nextAttemptAt ?? now) <= now && !busy.has(threadKey(job)))
    .map((job) => ({ job, id: compactionJobId(job) }))
    .sort((a, b) => (a.job.nextAttemptAt ?? now) - (b.job.nextAttemptAt ?? now) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const picked: CompactionJob[] = [];
  const taken = new Set<string>();
  for (const { job } of due) {
    if (picked.length >= limit) break;
    if (taken.has(threadKey(job))) continue;
    taken.add(threadKey(job));
    picked.push(job);
  }
  return picked;
}

/** Why the LLM summarizer may be unusable right now (seed 000: rate limit, budget gate, provider outage). */
export type SummarizerGate = "available" | "rate_limited" | "budget_denied" | "provider_outage";

/**
 * Which summarizer a claimed attempt uses: the LLM while it is available and the attempt is below
 * `fallbackFromAttempt`, otherwise the deterministic extractive fallback, so compaction never stalls.
 */
export function chooseSummarizer(
  job: Pick<CompactionJob, "attemptCount">,
  gate: SummarizerGate,
  policy: CompactionRetryPolicy,
): { summarizer: SummarizerKind; reason: "llm_available" | "retry_threshold" | Exclude<SummarizerGate, "available"> } {
  if (gate !== "available") return { summarizer: "extractive", reason: gate };
  if (job.attemptCount >= policy.fallbackFromAttempt) return { summarizer: "extractive", reason: "retry_threshold" };
  return { summarizer: "llm", reason: "llm_available" };
}
