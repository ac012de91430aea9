/** Shapes of run trace entries, shared by the gateway and the AgentDO. */

export type RunTraceKind = "attempt" | "policy" | "usage" | "saga";

/** One provider attempt. */
export interface AttemptEntry {
  provider: string;
  model: string;
  attempt: number;
  outcome: "retrying" | "retries_exhausted" | "fail_fast_aborted" | "succeeded" | "fallback";
  status?: number | null;
  errorCode?: string | null;
  backoffMs?: number;
  durationMs: number;
  /** The run step the call belonged to (run_step calls; the trace export hangs the call under its step). */
  step?: number;
}

/** A gate's decision (inference gate, brakes, budgets, quotas, approvals, admission). */
export interface PolicyEntry {
  gate: string;
  outcome: "allowed" | "denied" | "approval_required" | "approved" | "rejected" | "modified";
  code?: string | null;
  subject?: string;
  detail?: Record<string, unknown>;
}

export interface UsageEntry {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Cost in millionths of a US dollar (integer arithmetic; no float drift in daily sums). */
  costMicros: number;
  step?: number;
}

/**
 * A saga milestone as the agent sees it (the trace export's saga phase spans): the instance started
 * (waiting for a decision or not), the decision came back, phase 2 recorded the result (`durationMs`).
 */
export interface SagaEntry {
  operationId: string;
  phase: "started" | "approval_resolved" | "recorded";
  approval?: boolean;
  outcome?: string;
  durationMs?: number;
}

/** Where a run's trace entries go (RunTrace in a Durable Object; a recorder in unit tests). */
export interface TraceSink {
  attempt(runKey: string, entry: AttemptEntry): void;
  policy(runKey: string, entry: PolicyEntry): void;
  usage(runKey: string, entry: UsageEntry): void;
  /**
   * A successful call's attempt and then its usage, as `attempt` followed by `usage` would record them: a sink that
   * can write both at once does (the agent's RunTrace: one statement instead of two on every model call).
   */
  succeeded?(runKey: string, attempt: AttemptEntry, usage: UsageEntry): void;
}
