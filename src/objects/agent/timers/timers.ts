import { and, asc, desc, eq, isNotNull, min, ne } from "drizzle-orm";
import { runKeys, threadIds } from "../../../core/ids/run-keys";
import { initialNextRunAt, parseTimerSpec, planDueTimer, TimerCatchup } from "../../../core/wakes/timer-schedule";
import * as schema from "../../../db/agent-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import type { ListTimersQuery, Timer, TimerDecisionAction } from "../../../schema/agents/timers";
import type { WakeJob } from "../../../schema/agents/wake";
import { z } from "zod";
import { nowIso } from "../../shared/sqlite";
import type { AgentProfile } from "../lifecycle";
import { TIMER_RETRY_DELAY_MS, type TimerAlarm } from "./alarm";
import { decisionJson, toDecisionRecord, toTimer, type TimerRow } from "./records";
import type { AgentDb } from "../types";
import type { EnqueueOutcome, WakeInbox } from "../wakes";
import { pageByCreated } from "../../shared/keyset";

/** Active timers one agent may hold. */
export const MAX_ACTIVE_TIMERS = 100;
/** Decisions shown with each timer. */
const RECENT_DECISIONS = 10;
// Every activation's catch-up reads both.
const DUE_CANDIDATES = (db: AgentDb) => {
  const t = schema.timers;
  return db.select().from(t).where(and(eq(t.status, "active"), isNotNull(t.nextRunAt))).orderBy(asc(t.nextRunAt)).prepare();
};
const EARLIEST = (db: AgentDb) => db.select({ at: min(schema.timers.nextRunAt) }).from(schema.timers).where(eq(schema.timers.status, "active")).prepare();

export interface TimersDeps {
  db: AgentDb;
  profile: AgentProfile;
  inbox: WakeInbox;
  alarm: TimerAlarm;
  /** Starts the run loop once wakes are in the inbox. */
  kick(): void;
}

export interface TickDecision {
  timerId: string;
  action: TimerDecisionAction;
  runKey: string | null;
  enqueue: EnqueueOutcome["status"] | null;
}

export interface TickOutcome {
  evaluatedAt: string;
  decisions: TickDecision[];
  /** Timers whose tick failed; they stay due and are retried later. */
  failures: number;
}

type Wake = Pick<WakeJob, "runKey" | "reason" | "threadId" | "authority" | "input">;

const CreateTimerInput = TimerCatchup.extend({ name: z.string().trim().min(1).max(120).optional(), spec: z.unknown() });

/**
 * The agent's timers (SPEC §4): create/list/delete/trigger, and the tick that turns due slots into
 * wakes. Each due timer is decided by the core (`planDueTimer`); the decision, its wake and the
 * advanced `nextRunAt` are written in one transaction. One Agents SDK schedule tracks the earliest
 * `nextRunAt` (see TimerAlarm).
 */
export class Timers {
  /** Test clock (VIGIL_FAULTS only): while set, time is frozen here and the real alarm stays unarmed. */
  private clockOverride: number | null = null;

  constructor(private readonly deps: TimersDeps) {}

  now(): number {
    return this.clockOverride ?? Date.now();
  }

  async setClock(nowMs: number | null): Promise<void> {
    this.clockOverride = nowMs;
    await this.rearm();
  }

  /** `keyedId` (under an Idempotency-Key): a timer already holding it was created by the first attempt and is the answer. */
  async create(input: unknown, keyedId?: string): Promise<Result<{ timer: Timer }>> {
    const agent = this.deps.profile.get();
    if (!agent) return failure("not_found", "agent not found");
    if (agent.lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed");
    const earlier = keyedId === undefined ? undefined : this.deps.db.select().from(schema.timers).where(eq(schema.timers.id, keyedId)).get();
    if (earlier?.status === "deleted") return failure("idempotency_conflict", `the timer this Idempotency-Key created (${keyedId}) was deleted since; retry with a new Idempotency-Key`);
    if (earlier) return { ok: true, timer: this.view(earlier) };
    const body = CreateTimerInput.safeParse(input);
    if (!body.success) return failure("validation_failed", body.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
    const spec = parseTimerSpec(body.data.spec);
    if (!spec.ok) return failure("validation_failed", spec.issues.map((i) => `spec${i.path ? `.${i.path}` : ""}: ${i.message}`).join("; "));
    if (this.activeCount() >= MAX_ACTIVE_TIMERS) return failure("conflict", `an agent holds at most ${MAX_ACTIVE_TIMERS} active timers`);
    const now = nowIso();
    const row = this.deps.db
      .insert(schema.timers)
      .values({
        id: keyedId ?? randomId("tm_"),
        name: body.data.name ?? null,
        spec: spec.spec,
        catchupPolicy: body.data.catchupPolicy,
        catchupWindowSeconds: body.data.catchupWindowSeconds,
        nextRunAt: initialNextRunAt(spec.spec, this.now()),
        status: "active",
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    await this.rearm();
    return { ok: true, timer: toTimer(row, []) };
  }

  /** Oldest first; tombstoned timers only with `include=deleted`. */
  list(query: Pick<ListTimersQuery, "limit" | "cursor" | "include">): Result<Page<Timer>> {
    if (!this.deps.profile.get()) return failure("not_found", "agent not found");
    const after = decodeCursor(query.cursor, z.object({ c: z.string(), i: z.string() }));
    if (query.cursor && !after) return failure("validation_failed", "cursor is not valid");
    const t = schema.timers;
    const page = pageByCreated(this.deps.db, t, query.limit, after, (row) => this.view(row), [query.include === "deleted" ? undefined : ne(t.status, "deleted")]);
    return { ok: true, data: page.data, nextCursor: page.last && encodeCursor(page.last) };
  }

  /** Tombstones one timer (status `deleted`): it never fires again. */
  async delete(timerId: string): Promise<Result<{ timer: Timer }>> {
    const row = this.live(timerId);
    if (!row) return failure("not_found", "timer not found");
    const updated = this.deps.db
      .update(schema.timers)
      .set({ status: "deleted", nextRunAt: null, updatedAt: nowIso() })
      .where(eq(schema.timers.id, timerId))
      .returning()
      .get();
    await this.rearm();
    return { ok: true, timer: this.view(updated) };
  }

  /** Destroy: every timer becomes a tombstone and the alarm is released. */
  async tombstoneAll(): Promise<void> {
    this.deps.db
      .update(schema.timers)
      .set({ status: "deleted", nextRunAt: null, updatedAt: nowIso() })
      .where(ne(schema.timers.status, "deleted"))
      .run();
    await this.rearm();
  }

  /** Runs a timer now (reason `manual`); its schedule is untouched. Keyed by the caller's request id. */
  trigger(timerId: string, requestId: string): Result<{ runKey: string; outcome: EnqueueOutcome["status"] }> {
    const admitted = this.deps.profile.admit();
    if (!admitted.ok) return admitted;
    const row = this.live(timerId);
    if (!row) return failure("not_found", "timer not found");
    const agentId = admitted.agent.id;
    // Scoped by timer so the same Idempotency-Key on another route or timer is another run.
    const runKey = runKeys.manual(agentId, `timer:${timerId}:${requestId}`);
    const evaluatedAt = new Date(this.now()).toISOString();
    const enqueue = this.deps.db.transaction(() => {
      const outcome = this.deps.inbox.enqueue({
        ...this.wake(agentId, runKey, "manual"),
        input: { observation: { summary: `timer ${label(row)} triggered manually`, data: { timerId, requestedAt: evaluatedAt } } },
      });
      this.record(timerId, "manual_trigger", runKey, { action: "manual_trigger", evaluatedAt, enqueue: outcome.status });
      return outcome;
    });
    this.deps.kick();
    return { ok: true, runKey, outcome: enqueue.status };
  }

  /** Tick at `nowMs`, start the run loop for any wake, then re-arm the alarm at the earliest due timer. */
  async runDue(nowMs = this.now()): Promise<TickOutcome> {
    // Taken before the tick: only then is no earlier re-arm in flight whose awaits a timer write could slip into.
    const idle = this.deps.alarm.idle();
    const { outcome, earliest } = this.plan(nowMs);
    if (outcome.decisions.some((decision) => decision.enqueue === "accepted")) this.deps.kick();
    await this.rearm(outcome.failures > 0 ? TIMER_RETRY_DELAY_MS : 0, idle ? earliest : undefined);
    return outcome;
  }

  /**
   * On activation: slots missed while the object slept are decided now, in the background. `candidates` false: the
   * activation's one read (../activation.ts) found no active timer with a `nextRunAt`, so there is nothing to decide
   * or to arm (session 15: the re-arm then only listed the SDK's schedules to drop a stray alarm row, on every
   * activation; a stray row that fires finds nothing due and goes).
   */
  catchUp(candidates = true): void {
    if (!candidates) return;
    this.runDue(this.now()).catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "timer catch-up failed", error: String(error) })));
  }

  /**
   * Plans every active timer at `nowMs`. A `wait` (not due, nothing changes) is not recorded; every
   * other decision is, in the same transaction as its wake and the timer's advanced `nextRunAt`.
   */
  tick(nowMs: number): TickOutcome {
    return this.plan(nowMs).outcome;
  }

  /**
   * The tick, and the earliest `nextRunAt` when it is known without another read (undefined: read it): a tick that
   * decided nothing wrote nothing, so the earliest is its first candidate's — the candidates are exactly the active
   * timers with a `nextRunAt`, ordered by it, which is what `min(next_run_at)` over active timers ranges over.
   */
  private plan(nowMs: number): { outcome: TickOutcome; earliest: number | null | undefined } {
    const outcome = emptyOutcome(nowMs);
    const agent = this.deps.profile.get();
    // A destroyed agent's timers are tombstones; none may wake it.
    if (!agent || agent.lifecycle === "destroyed") return { outcome, earliest: undefined };
    const rows = DUE_CANDIDATES(this.deps.db).all();
    for (const row of rows) {
      try {
        const decided = this.decide(agent.id, row, nowMs);
        if (decided) outcome.decisions.push(decided);
      } catch (error) {
        outcome.failures += 1;
        console.error(JSON.stringify({ level: "error", msg: "timer tick failed", timerId: row.id, error: String(error) }));
      }
    }
    const wroteNothing = outcome.decisions.length === 0 && outcome.failures === 0;
    return { outcome, earliest: wroteNothing ? (rows[0]?.nextRunAt ?? null) : undefined };
  }

  private decide(agentId: string, row: TimerRow, nowMs: number): TickDecision | null {
    const spec = parseTimerSpec(row.spec);
    if (!spec.ok) throw new Error(`stored spec is invalid: ${spec.message}`);
    const decision = planDueTimer({
      spec: spec.spec,
      nextRunAt: row.nextRunAt!,
      nowMs,
      catchupPolicy: row.catchupPolicy as "coalesce" | "skip",
      catchupWindowSeconds: row.catchupWindowSeconds,
    });
    if (decision.action === "wait") return null;
    let wake: Wake | null = null;
    if (decision.action === "fire") {
      const scheduledAt = new Date(decision.scheduledAt).toISOString();
      const runKey = runKeys.timer(agentId, row.id, scheduledAt);
      wake = { ...this.wake(agentId, runKey, "timer"), input: { observation: { summary: `timer ${label(row)} fired`, data: { timerId: row.id, scheduledAt } } } };
    } else if (decision.action === "catchup") {
      const [firstMissedAt, lastMissedAt] = [decision.firstMissedAt, decision.lastMissedAt].map((ms) => new Date(ms).toISOString()) as [string, string];
      const runKey = runKeys.recoveryCatchup(agentId, row.id, lastMissedAt);
      const data = { timerId: row.id, missedCount: decision.missedCount, missedCountCapped: decision.missedCountCapped, firstMissedAt, lastMissedAt, cause: "timer" };
      wake = { ...this.wake(agentId, runKey, "recoveryCatchup"), input: { observation: { summary: `timer ${label(row)} missed ${decision.missedCount} firings; one catch-up run`, data } } };
    }
    const enqueue = this.deps.db.transaction((tx) => {
      const outcome = wake ? this.deps.inbox.enqueue(wake).status : null;
      this.record(row.id, decision.action, wake?.runKey ?? null, decisionJson(decision, outcome));
      tx.update(schema.timers)
        .set({ nextRunAt: decision.advancedNextRunAt, status: decision.advancedNextRunAt === null ? "completed" : "active", updatedAt: nowIso() })
        .where(eq(schema.timers.id, row.id))
        .run();
      return outcome;
    });
    return { timerId: row.id, action: decision.action, runKey: wake?.runKey ?? null, enqueue };
  }

  /** Re-arms the SDK schedule at the earliest active timer (not while the test clock is frozen); `known`: see plan. */
  private async rearm(minDelayMs = 0, known?: number | null): Promise<void> {
    if (this.clockOverride !== null) return;
    await this.deps.alarm.arm(() => (known === undefined ? this.earliestNextRunAt() : known), minDelayMs);
  }

  private earliestNextRunAt(): number | null {
    return EARLIEST(this.deps.db).get()?.at ?? null;
  }

  private activeCount(): number {
    return this.deps.db.select({ id: schema.timers.id }).from(schema.timers).where(eq(schema.timers.status, "active")).all().length;
  }

  /** A timer that exists and is not tombstoned, of an agent that exists. */
  private live(timerId: string): TimerRow | null {
    if (!this.deps.profile.get()) return null;
    const row = this.deps.db.select().from(schema.timers).where(eq(schema.timers.id, timerId)).get();
    return row && row.status !== "deleted" ? row : null;
  }

  private wake(agentId: string, runKey: string, reason: Wake["reason"]): Omit<Wake, "input"> {
    return { runKey, reason, threadId: threadIds.autonomous(agentId, runKey), authority: "runtime_instruction" };
  }

  private record(timerId: string, action: TimerDecisionAction, runKey: string | null, decision: Record<string, unknown>): void {
    this.deps.db.insert(schema.schedulerDecisions).values({ timerId, action, runKey, decision, createdAt: nowIso() }).run();
  }

  private view(row: TimerRow): Timer {
    const d = schema.schedulerDecisions;
    const decisions = this.deps.db.select().from(d).where(eq(d.timerId, row.id)).orderBy(desc(d.seq)).limit(RECENT_DECISIONS).all();
    return toTimer(
      row,
      decisions.map((decision) => toDecisionRecord(decision, decision.runKey ? (this.deps.inbox.getRun(decision.runKey)?.status ?? null) : null)),
    );
  }
}

const label = (row: TimerRow): string => row.name ?? row.id;

const emptyOutcome = (nowMs: number): TickOutcome => ({ evaluatedAt: new Date(nowMs).toISOString(), decisions: [], failures: 0 });
