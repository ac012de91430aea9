import { config } from "../../../config";
import { admitTurn, type DoubleTextingPolicy, type TurnAdmission } from "../../../core/wakes/double-texting";
import { rateLimitKeys } from "../../../core/governance/rate-limit";
import { runKeys, threadIds } from "../../../core/ids/run-keys";
import { failure, type Result } from "../../../core/runtime/result";
import { turnAuthority, type TurnCredential } from "../../../core/wakes/provenance";
import type { WakeJob } from "../../../schema/agents/wake";
import { consumeCounter } from "../../shared/counters";
import type { SlidingLogDecision } from "../../../core/governance/sliding-log";
import type { RunGovernor } from "../runs";
import type { Drainer } from "./drain";
import type { EventLog } from "../events";
import type { AgentProfile } from "../lifecycle";
import type { AgentDb } from "../types";
import type { EnqueueOutcome, WakeInbox } from "./inbox";
import type { Interrupts } from "./interrupts";
import type { Sessions } from "./sessions";

export interface TurnInput {
  text: string;
  sessionId: string;
  turnId: string;
  /** The verified credential the turn came with; its authority is derived from it here, never taken from the caller. */
  credential: TurnCredential;
  stream: boolean;
  /** Overrides the agent's `config.doubleTexting` for this message. */
  doubleTexting?: DoubleTextingPolicy | undefined;
}

export interface WakeAdmissionDeps {
  db: AgentDb;
  events: EventLog;
  profile: AgentProfile;
  inbox: WakeInbox;
  governor: RunGovernor;
  drain: Drainer;
  sessions: Sessions;
  interrupts: Interrupts;
  /** The per-agent turn limit in force (VIGIL_RATE_LIMITS may override it). */
  turnsPerMinute(): number;
  /** A wake's tenant snapshot version (TenantSnapshotCache.confirm). */
  confirmSnapshot?(version: number, atMs: number): void;
}

/** How wakes enter the inbox: user turns (admission, brakes, turn limit, deterministic runKey) and every other wake. */
export class WakeAdmission {
  constructor(private readonly deps: WakeAdmissionDeps) {}

  async submitTurn(turn: TurnInput): Promise<Result<{ runKey: string; outcome: EnqueueOutcome["status"]; stream: ReadableStream<Uint8Array> | null }>> {
    const { events, profile, inbox, governor } = this.deps;
    const admitted = profile.admit();
    if (!admitted.ok) return admitted;
    const agentId = admitted.agent.id;
    const runKey = runKeys.userInitiated(agentId, turn.sessionId, turn.turnId);
    const threadId = threadIds.interactive(agentId, turn.sessionId);
    const known = inbox.getRun(runKey) !== null;
    // Double texting (issue 15 §4): decided once, when the turn is new; a retry of an accepted turn is not re-decided.
    let admission: TurnAdmission = { kind: "run" };
    if (!known) {
      // Brakes (helper "brakes"): a new turn is refused while an agent-wide brake covers the agent; a retry of an accepted one is not.
      const brake = await governor.brakeOnWake(admitted.agent);
      if (brake) return failure("brake_engaged", `brake ${brake.brakeId} (${brake.behaviour}) stops new wakes of this agent; release it with POST /v1/brakes/${brake.brakeId}/release`);
      admission = admitTurn(admitted.agent.config.doubleTexting ?? "enqueue", turn.doubleTexting, inbox.unsettledOn(threadId, runKey));
      if (admission.kind === "reject") {
        events.append("turn.rejected", admission.inFlight[0]!, { sessionId: turn.sessionId, threadId, policy: "reject", inFlight: admission.inFlight });
        return failure("run_in_progress", `a run of session ${turn.sessionId} is in flight (${admission.inFlight[0]}); retry when it has finished, or send with doubleTexting enqueue | merge | interrupt`);
      }
      const perMinute = this.deps.turnsPerMinute();
      const limit = this.consumeTurn(rateLimitKeys.agentTurns(agentId), perMinute);
      if (!limit.allowed) {
        return { ok: false, code: "rate_limited", message: `this agent accepts ${perMinute} turns per minute; retry in ${limit.retryAfterSeconds}s`, retryAfterSeconds: limit.retryAfterSeconds };
      }
    }
    // Subscribe before enqueueing so the stream cannot miss the run's first events. A new run has none yet: it
    // only follows live, so the turn reads no old rows however old the agent is (and no head or replay read at all);
    // a retry of a known run replays that run's own events (through the runKey index) and then follows live.
    const stream = turn.stream ? events.subscribe(known ? 0 : "live", { runKey, closeOn: ["run.completed", "run.failed"] }) : null;
    // Every accepted turn keeps its session open (a closed one reopens: docs/decisions.md "Sessions and extension slots").
    // The TTL is the tenant's override as read by the brake check above (a retried turn keeps the last one read).
    this.deps.sessions.touch(turn.sessionId, threadId, governor.sessionIdleTtlSeconds(config.sessions.idleTtlSeconds));
    const outcome = inbox.enqueue({
      runKey,
      reason: "userInitiated",
      threadId,
      authority: turnAuthority(turn.credential),
      input: { text: turn.text, sessionId: turn.sessionId, turnId: turn.turnId, ...doubleTextingInput(admission) },
    });
    if (outcome.status === "accepted") await this.announceDoubleTexting(admission, runKey);
    if (stream) this.deps.drain.startInline();
    else this.deps.drain.start();
    return { ok: true, runKey, outcome: outcome.status, stream };
  }

  private consumeTurn(key: string, perMinute: number): SlidingLogDecision {
    return consumeCounter(this.deps.db, key, perMinute, 60_000);
  }

  /** What the session's stream shows of the policy's outcome; an interrupt marks its runs (and cancels their open approvals). */
  private async announceDoubleTexting(admission: TurnAdmission, runKey: string): Promise<void> {
    if (admission.kind === "queue") this.deps.events.append("turn.queued", runKey, { runKey, policy: admission.policy, inFlight: admission.inFlight });
    if (admission.kind === "interrupt") {
      this.deps.events.append("turn.interrupting", runKey, { runKey, policy: "interrupt", interrupts: admission.inFlight });
      await this.deps.interrupts.request(admission.inFlight, runKey);
    }
  }

  /**
   * Duplicates of a known runKey are acknowledged and dropped; a wake for a dormant or destroyed agent is recorded and
   * settles as skipped. The drain starts on a macrotask, so a builtin-model run does not hold back the answer of
   * hooks, decisions and delegation; the wake consumer's delivery admits with `admit` and drains itself (./delivery.ts).
   */
  async enqueue(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    const admitted = this.admit(job);
    if (admitted.ok) this.deps.drain.start();
    return admitted;
  }

  /** The admission alone: the caller starts the drain. */
  admit(job: WakeJob): Result<EnqueueOutcome> {
    if (!this.deps.profile.get()) return failure("not_found", "agent not found");
    if (job.snapshot) this.deps.confirmSnapshot?.(job.snapshot.version, job.snapshot.at);
    return { ok: true, ...this.deps.inbox.enqueue(job) };
  }
}

/** What the run loop needs to know of the decision: a merge joins the session's next run; an interrupt waits for its runs to settle. */
function doubleTextingInput(admission: TurnAdmission): Record<string, unknown> {
  if (admission.kind === "queue" && admission.policy === "merge") return { merge: true };
  if (admission.kind === "interrupt") return { awaits: admission.inFlight };
  return {};
}
