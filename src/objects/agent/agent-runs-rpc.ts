import { inWidgetThread } from "../../core/widget-session";
import { failure, type Result } from "../../http/error-codes";
import type { AgentUsage } from "../../schema/brakes";
import type { Page } from "../../schema/common";
import type { Message } from "../../schema/messages";
import type { SessionView } from "../../schema/sessions";
import type { AgentEvent, Run } from "../../schema/runs";
import type { CreateTimerBody, ListTimersQuery, Timer } from "../../schema/timers";
import type { WakeJob } from "../../schema/wake";
import type { ToolResultEnvelope } from "../../core/tool-envelopes";
import type { ApprovalState } from "../tenant/tool-approvals";
import { AgentMemoryRpc } from "./agent-memory-rpc";
import { messagePage, runPage } from "./paged-reads";
import type { TickOutcome } from "./timers";
import type { TurnInput } from "./wake-admission";
import type { EnqueueOutcome } from "./wake-inbox";

/** AgentDO's runs RPC: turns and wakes, messages, runs and events, timers, tool sagas, brakes and usage. */
export abstract class AgentRunsRpc extends AgentMemoryRpc {
  /** A user turn: admission, per-agent turn limit, deterministic runKey, inbox. */
  async submitTurn(turn: TurnInput): Promise<Result<{ runKey: string; outcome: EnqueueOutcome["status"]; stream: ReadableStream<Uint8Array> | null }>> {
    return this.parts.wakes.submitTurn(turn);
  }

  /** Any other wake (manual, queue-delivered); duplicates of a known runKey are acknowledged and dropped. */
  async enqueueWake(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    return this.parts.wakes.enqueue(job);
  }

  /** `eventSeq`: the event log position this page is consistent with, so a reader resumes /events there without gap or duplicate. */
  async listMessages(query: { limit: number; cursor?: string | undefined; threadId?: string | undefined }): Promise<Result<Page<Message> & { eventSeq: number }>> {
    return this.missingAgent() ?? messagePage(this.parts.history, this.parts.events, query);
  }

  async listRuns(query: { limit: number; cursor?: string | undefined }): Promise<Result<Page<Run>>> {
    return this.missingAgent() ?? runPage(this.parts.inbox, this.parts.runView, query);
  }

  async getRun(runKey: string): Promise<Result<{ run: Run }>> {
    const run = this.parts.profile.get() ? this.parts.inbox.getRun(runKey) : null;
    return run ? { ok: true, run: this.parts.runView.detail(run) } : failure("not_found", "run not found");
  }

  listEvents(after: number, limit: number): AgentEvent[] {
    return this.parts.events.listAfter(after, limit);
  }

  /**
   * SSE body: replay after `after`, then live. `widgetNamespace` (a widget token's session namespace) narrows
   * it to events of runs on that visitor's threads; agent-wide events without a run are never shown to it.
   */
  openEvents(after: number, widgetNamespace?: string): Result<{ stream: ReadableStream<Uint8Array> }> {
    const missing = this.missingAgent();
    if (missing) return missing;
    if (widgetNamespace === undefined) return { ok: true, stream: this.parts.events.subscribe(after) };
    const agentIds = [this.parts.profile.get()!.id];
    // A run's thread never changes: remember the verdict per runKey (only once the run exists).
    const verdicts = new Map<string, boolean>();
    const visible = ({ runKey }: { runKey: string | null }): boolean => {
      if (runKey === null) return false;
      const known = verdicts.get(runKey);
      if (known !== undefined) return known;
      const run = this.parts.inbox.getRun(runKey);
      if (!run) return false;
      const verdict = inWidgetThread(widgetNamespace, agentIds, run.threadId);
      verdicts.set(runKey, verdict);
      return verdict;
    };
    return { ok: true, stream: this.parts.events.subscribe(after, { visible }) };
  }

  /** `POST …/sessions/:sid/close`: idempotent; an unknown session is not_found. */
  async closeSession(sessionId: string): Promise<Result<{ session: SessionView; changed: boolean }>> {
    return this.missingAgent() ?? this.parts.sessions.close(sessionId);
  }

  /** Agents SDK schedule callback: the earliest open session's inactivity deadline came due (one bounded batch). */
  async onSessionExpiry(): Promise<void> {
    await this.parts.sessions.expireDue();
  }

  /** Test seam (VIGIL_FAULTS=enabled only): one expiry sweep as if the clock read `nowMs`. */
  async expireSessions(nowMs: number): Promise<Result<{ closed: number; more: boolean }>> {
    return this.seamDisabled() ?? { ok: true, ...(await this.parts.sessions.expireDue(nowMs)) };
  }

  /** Brakes: the brake that would refuse a new API wake of this agent now, or null. */
  async wakeBrake(): Promise<{ brakeId: string; behaviour: string } | null> {
    const agent = this.parts.profile.get();
    return agent ? this.parts.governor.brakeOnWake(agent) : null;
  }

  /** `GET /v1/agents/:id/usage`: one tenant-local day (today by default) against the budgets and quotas in force. */
  async getUsage(day?: string): Promise<Result<{ usage: AgentUsage }>> {
    const agent = this.parts.profile.get();
    return agent ? { ok: true, usage: await this.parts.governor.usageView(agent, day) } : failure("not_found", "agent not found");
  }

  createTimer(body: CreateTimerBody): Promise<Result<{ timer: Timer }>> {
    return this.parts.timers.create(body);
  }

  listTimers(query: ListTimersQuery): Result<Page<Timer>> {
    return this.parts.timers.list(query);
  }

  deleteTimer(timerId: string): Promise<Result<{ timer: Timer }>> {
    return this.parts.timers.delete(timerId);
  }

  /** Runs a timer now (reason manual); `requestId` is the Idempotency-Key or a random id. */
  triggerTimer(timerId: string, requestId: string): Result<{ runKey: string; outcome: EnqueueOutcome["status"] }> {
    return this.parts.timers.trigger(timerId, requestId);
  }

  /** Agents SDK schedule callback (the timers keep one schedule, at the earliest nextRunAt). */
  async onTimerAlarm(): Promise<void> {
    await this.parts.timers.runDue();
  }

  /** Test seam (VIGIL_FAULTS=enabled only): one timer tick as if the clock read `nowMs`. */
  async tickTimers(nowMs: number): Promise<Result<TickOutcome>> {
    return this.seamDisabled() ?? { ok: true, ...(await this.parts.timers.runDue(nowMs)) };
  }

  /** Test seam (VIGIL_FAULTS=enabled only): freezes the timers' clock at `nowMs` (null: real time, re-arm). */
  async setTimerClock(nowMs: number | null): Promise<boolean> {
    if (this.seamDisabled()) return false;
    await this.parts.timers.setClock(nowMs);
    return true;
  }

  /** The tool saga's approval outcome (JSON text of `ApprovalState`), before phase 1; safe to repeat. */
  async recordApproval(operationId: string, outcome: string): Promise<Result<{ recorded: boolean; refusal: string | null }>> {
    return this.parts.sagas.recordApproval(operationId, JSON.parse(outcome) as ApprovalState);
  }

  /** Saga phase 2 (safe to call any number of times). */
  async recordToolResult(operationId: string, result: ToolResultEnvelope): Promise<Result<{ resumed: boolean }>> {
    return this.parts.sagas.record(operationId, result);
  }

  /** Wakes the drain after a restart even if no request arrives (Agent SDK schedule → DO alarm), and re-drives sagas. */
  async watchdog(): Promise<void> {
    await this.parts.sagas.recover();
    if (this.parts.inbox.pendingCount() > 0) this.parts.drain.start();
    await this.parts.childReports.flush();
  }

  async recoverSagas(): Promise<number> {
    return this.parts.sagas.recover();
  }
}
