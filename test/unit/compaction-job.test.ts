import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  admitCompactionJob,
  applyCompactionEvent,
  backoffDelayMs,
  chooseSummarizer,
  COMPACTION_JOB_STATUSES,
  compactionJobId,
  DEFAULT_COMPACTION_RETRY_POLICY as policy,
  newCompactionJob,
  recoverInterruptedJob,
  selectDueJobs,
  validateRetryPolicy,
  type CompactionJob,
  type CompactionJobEvent,
} from "../../src/core/memory/compaction-job";
import { H } from "../../src/core/ids/hash";
import type { SummarySpan } from "../../src/core/memory/memory-policy";

const span = (threadId = "a:session:s", start = "m1", end = "m9"): SummarySpan => ({
  agentId: "a",
  threadId,
  startMessageId: start,
  endMessageId: end,
  summaryDepth: 0,
});

function step(job: CompactionJob, event: CompactionJobEvent): CompactionJob {
  const result = applyCompactionEvent(job, event, policy);
  if (!result.ok) throw new Error(`${result.code} from ${result.from} on ${result.event}`);
  return result.job;
}

describe("compaction job state machine", () => {
  it("runs pending → running → done", () => {
    let job = newCompactionJob(span(), 1_000);
    expect(job).toMatchObject({ status: "pending", attemptCount: 0, nextAttemptAt: 1_000 });
    job = step(job, { type: "claim", now: 1_000 });
    expect(job).toMatchObject({ status: "running", attemptCount: 1, nextAttemptAt: null });
    job = step(job, { type: "commit", now: 2_000 });
    expect(job).toMatchObject({ status: "done", attemptCount: 1, nextAttemptAt: null, updatedAt: 2_000 });
  });

  it("retries with bounded exponential backoff, then ends failed_terminal at maxAttempts", () => {
    let job = newCompactionJob(span(), 0);
    const delays: number[] = [];
    let now = 0;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      job = step(job, { type: "claim", now });
      job = step(job, { type: "fail", now, error: "rate_limited" });
      if (job.status === "pending") {
        delays.push(job.nextAttemptAt! - now);
        now = job.nextAttemptAt!;
      }
    }
    expect(delays).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(job).toMatchObject({ status: "failed_terminal", attemptCount: policy.maxAttempts, nextAttemptAt: null, lastError: "rate_limited" });
    expect(backoffDelayMs(20, policy)).toBe(policy.maxDelayMs);
    expect(backoffDelayMs(10_000, policy)).toBe(policy.maxDelayMs);
  });

  it("refuses to claim before nextAttemptAt", () => {
    let job = step(newCompactionJob(span(), 0), { type: "claim", now: 0 });
    job = step(job, { type: "fail", now: 0, error: "outage" });
    expect(applyCompactionEvent(job, { type: "claim", now: 29_999 }, policy)).toEqual({ ok: false, code: "not_due", from: "pending", event: "claim" });
    expect(applyCompactionEvent(job, { type: "claim", now: 30_000 }, policy).ok).toBe(true);
  });

  it("rejects transitions the machine does not have", () => {
    const pending = newCompactionJob(span(), 0);
    const running = step(pending, { type: "claim", now: 0 });
    const done = step(running, { type: "commit", now: 0 });
    expect(applyCompactionEvent(pending, { type: "commit", now: 0 }, policy)).toMatchObject({ ok: false, code: "invalid_transition" });
    expect(applyCompactionEvent(running, { type: "claim", now: 0 }, policy)).toMatchObject({ ok: false, code: "invalid_transition" });
    expect(applyCompactionEvent(done, { type: "fail", now: 0, error: "x" }, policy)).toMatchObject({ ok: false, code: "invalid_transition" });
    expect(applyCompactionEvent(pending, { type: "requeue", now: 0 }, policy)).toMatchObject({ ok: false, code: "invalid_transition" });
  });

  it("lets maintenance requeue a failed_terminal job with a fresh attempt budget", () => {
    let job = newCompactionJob(span(), 0);
    for (let i = 0; i < policy.maxAttempts; i++) {
      job = step(job, { type: "claim", now: job.nextAttemptAt! });
      job = step(job, { type: "fail", now: job.updatedAt, error: "e" });
    }
    job = step(job, { type: "requeue", now: 9_999_999 });
    expect(job).toMatchObject({ status: "pending", attemptCount: 0, nextAttemptAt: 9_999_999 });
  });

  it("counts an attempt interrupted by eviction as a failure", () => {
    const running = step(newCompactionJob(span(), 0), { type: "claim", now: 0 });
    expect(recoverInterruptedJob(running, 5, policy)).toMatchObject({ status: "pending", lastError: "interrupted", nextAttemptAt: 30_005 });
    const pending = newCompactionJob(span(), 0);
    expect(recoverInterruptedJob(pending, 5, policy)).toBe(pending);
  });

  it("holds its invariants under any event sequence", () => {
    const event = fc.oneof(
      fc.record({ type: fc.constant("claim" as const), dt: fc.integer({ min: 0, max: 5_000_000 }) }),
      fc.record({ type: fc.constant("commit" as const), dt: fc.integer({ min: 0, max: 1_000 }) }),
      fc.record({ type: fc.constant("fail" as const), dt: fc.integer({ min: 0, max: 1_000 }) }),
      fc.record({ type: fc.constant("requeue" as const), dt: fc.integer({ min: 0, max: 1_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        let job = newCompactionJob(span(), 0);
        let now = 0;
        for (const { type, dt } of events) {
          now += dt;
          const before = job;
          const result = applyCompactionEvent(job, type === "fail" ? { type, now, error: "e" } : { type, now }, policy);
          if (!result.ok) {
            expect(result.from).toBe(before.status);
            continue;
          }
          job = result.job;
          expect(COMPACTION_JOB_STATUSES).toContain(job.status);
          expect(job.attemptCount).toBeLessThanOrEqual(policy.maxAttempts);
          expect(before.status).not.toBe("done"); // done is absorbing
          if (job.status === "failed_terminal") expect(job.attemptCount).toBe(policy.maxAttempts);
          if (job.status === "pending" && type === "fail") {
            expect(job.nextAttemptAt! - now).toBeLessThanOrEqual(policy.maxDelayMs);
            expect(job.nextAttemptAt! - now).toBeGreaterThanOrEqual(policy.baseDelayMs);
          }
          expect(compactionJobId(job)).toBe(compactionJobId(span()));
        }
      }),
    );
  });
});

describe("single-flight per thread", () => {
  it("admits a job on an idle thread and refuses a second while one is pending or running", () => {
    const first = newCompactionJob(span("t1", "m1", "m9"), 0);
    expect(admitCompactionJob([], span("t1", "m1", "m9"))).toEqual({ admit: true });
    expect(admitCompactionJob([first], span("t1", "m10", "m19"))).toEqual({ admit: false, code: "thread_busy", blockingJobId: compactionJobId(first) });
    const running = step(first, { type: "claim", now: 0 });
    expect(admitCompactionJob([running], span("t1", "m10", "m19"))).toMatchObject({ admit: false, code: "thread_busy" });
    expect(admitCompactionJob([running], span("t2", "m10", "m19"))).toEqual({ admit: true });
    const done = step(running, { type: "commit", now: 0 });
    expect(admitCompactionJob([done], span("t1", "m10", "m19"))).toEqual({ admit: true });
  });

  it("never creates a second job for the same span", () => {
    const done = step(step(newCompactionJob(span(), 0), { type: "claim", now: 0 }), { type: "commit", now: 0 });
    expect(admitCompactionJob([done], span())).toEqual({ admit: false, code: "span_exists", status: "done" });
  });

  it("derives the job id from the span tuple", () => {
    expect(compactionJobId(span())).toBe(H("a", "a:session:s", "m1", "m9"));
  });

  it("selects at most one due job per thread, skipping threads with a running job, oldest first", () => {
    const a1 = { ...newCompactionJob(span("t1", "m1", "m2"), 0), nextAttemptAt: 50 };
    const a2 = { ...newCompactionJob(span("t1", "m3", "m4"), 0), nextAttemptAt: 10 };
    const b1 = step(newCompactionJob(span("t2", "m5", "m6"), 0), { type: "claim", now: 0 });
    const b2 = newCompactionJob(span("t2", "m7", "m8"), 0);
    const c1 = { ...newCompactionJob(span("t3", "m9", "m9"), 0), nextAttemptAt: 500 };
    const d1 = { ...newCompactionJob(span("t4", "m10", "m11"), 0), nextAttemptAt: 20 };
    expect(selectDueJobs([a1, a2, b1, b2, c1, d1], 100, 10)).toEqual([a2, d1]);
    expect(selectDueJobs([a1, a2, b1, b2, c1, d1], 100, 1)).toEqual([a2]);
  });

  it("never selects two jobs of one thread, whatever the job set", () => {
    const job = fc.record({
      thread: fc.constantFrom("t1", "t2", "t3"),
      start: fc.integer({ min: 1, max: 50 }),
      status: fc.constantFrom(...COMPACTION_JOB_STATUSES),
      due: fc.integer({ min: 0, max: 200 }),
    });
    fc.assert(
      fc.property(fc.array(job, { maxLength: 20 }), fc.integer({ min: 1, max: 5 }), (rows, limit) => {
        const jobs = rows.map((r) => ({ ...newCompactionJob(span(r.thread, `m${r.start}`, `m${r.start + 1}`), 0), status: r.status, nextAttemptAt: r.due }));
        const picked = selectDueJobs(jobs, 100, limit);
        expect(picked.length).toBeLessThanOrEqual(limit);
        expect(new Set(picked.map((j) => j.threadId)).size).toBe(picked.length);
        for (const p of picked) {
          expect(p.status).toBe("pending");
          expect(p.nextAttemptAt!).toBeLessThanOrEqual(100);
          expect(jobs.some((j) => j.threadId === p.threadId && j.status === "running")).toBe(false);
        }
        expect(selectDueJobs([...jobs].reverse(), 100, limit).map(compactionJobId).sort()).toEqual(picked.map(compactionJobId).sort());
      }),
    );
  });
});

describe("summarizer choice", () => {
  it("uses the LLM while available, the extractive fallback on a gate or past the retry threshold", () => {
    expect(chooseSummarizer({ attemptCount: 1 }, "available", policy)).toEqual({ summarizer: "llm", reason: "llm_available" });
    expect(chooseSummarizer({ attemptCount: 1 }, "rate_limited", policy)).toEqual({ summarizer: "extractive", reason: "rate_limited" });
    expect(chooseSummarizer({ attemptCount: 1 }, "budget_denied", policy)).toEqual({ summarizer: "extractive", reason: "budget_denied" });
    expect(chooseSummarizer({ attemptCount: 1 }, "provider_outage", policy)).toEqual({ summarizer: "extractive", reason: "provider_outage" });
    expect(chooseSummarizer({ attemptCount: policy.fallbackFromAttempt }, "available", policy)).toEqual({ summarizer: "extractive", reason: "retry_threshold" });
  });
});

describe("validateRetryPolicy", () => {
  it("accepts the defaults and names the failing field", () => {
    expect(validateRetryPolicy(policy).ok).toBe(true);
    expect(validateRetryPolicy({ ...policy, maxAttempts: 0 })).toMatchObject({ ok: false, field: "maxAttempts", message: "maxAttempts must be an integer >= 1" });
    expect(validateRetryPolicy({ ...policy, maxDelayMs: 1 })).toMatchObject({ ok: false, field: "maxDelayMs" });
  });
});
