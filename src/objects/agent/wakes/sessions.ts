import { and, asc, eq, isNotNull, lte, min, sql } from "drizzle-orm";
import { config } from "../../../config";
import * as schema from "../../../db/agent-schema";
import { failure, type Result } from "../../../core/runtime/result";
import type { SessionView } from "../../../schema/agents/sessions";
import type { AgentScheduler } from "../lifecycle";
import { logFailure } from "../../shared/background";
import type { EventLog } from "../events";
import type { AgentDb } from "../types";

const s = schema.sessions;
const BY_ID = (db: AgentDb) => db.select().from(s).where(eq(s.sessionId, sql.placeholder("sessionId"))).prepare();
const REOPEN = (db: AgentDb) =>
  db
    .update(s)
    .set({ status: "open", lastActivityAt: sql`${sql.placeholder("now")}`, expiresAtMs: sql`${sql.placeholder("expiresAtMs")}`, closedAt: null, closeReason: null })
    .where(eq(s.sessionId, sql.placeholder("sessionId")))
    .prepare();
const TOUCH_OPEN = (db: AgentDb) =>
  db
    .update(s)
    .set({ lastActivityAt: sql`${sql.placeholder("now")}`, expiresAtMs: sql`${sql.placeholder("expiresAtMs")}` })
    .where(and(eq(s.sessionId, sql.placeholder("sessionId")), eq(s.status, "open")))
    .returning({ sessionId: s.sessionId })
    .prepare();
const EARLIEST_OPEN = (db: AgentDb) => db.select({ at: min(s.expiresAtMs) }).from(s).where(eq(s.status, "open")).prepare();

/** The AgentDO method the Agents SDK calls when the earliest open session's inactivity deadline comes due. */
export const SESSION_EXPIRY_CALLBACK = "onSessionExpiry";

export type SessionCloseReason = "explicit" | "idle_timeout";

export interface SessionsDeps {
  db: AgentDb;
  events: EventLog;
  scheduler: AgentScheduler;
}

/**
 * Interactive sessions (SPEC §3): a session opens with its first user turn; every turn pushes its
 * inactivity deadline (`expiresAtMs`) out by the TTL in force. It closes explicitly
 * (`POST …/sessions/:sid/close`, idempotent) or when the deadline passes: one SDK schedule row
 * (`onSessionExpiry`) sits at the earliest open deadline and closes due sessions in bounded batches.
 * Each close appends `session.closed`; a turn to a closed session reopens it (`session.reopened`).
 */
export class Sessions {
  private arming: Promise<void> = Promise.resolve();
  /** Every accepted turn reads its session (issue 12 §8): built once. */
  private readonly byId;
  private readonly update;
  /** The earliest open deadline, read by every re-arm (every turn): built once (session 11). */
  private readonly earliestOpen;

  constructor(private readonly deps: SessionsDeps) {
    this.byId = BY_ID(deps.db);
    this.update = REOPEN(deps.db);
    this.touchOpen = TOUCH_OPEN(deps.db);
    this.earliestOpen = EARLIEST_OPEN(deps.db);
  }

  /** The common touch (the session is open): one statement that says whether it was (issue 12 §8). */
  private readonly touchOpen;
  /**
   * The time (whole seconds) of the future `onSessionExpiry` row this object armed or found, 0 when not known: a
   * re-arm that finds it at or before its target needs no look at the SDK's jobs. Exact: the row goes when it fires
   * (its time has come, and the knowledge with it), when `applyArm` cancels it (and forgets it first), or with an
   * erasure (`forget`).
   */
  private armedAt = 0;

  /** The storage was erased (the schedule row with it). */
  forget(): void {
    this.armedAt = 0;
  }

  /** An accepted user turn: opens (or reopens) the session and moves its deadline to now + TTL. */
  touch(sessionId: string, threadId: string, ttlSeconds: number, nowMs = Date.now()): { reopened: boolean } {
    const { db, events } = this.deps;
    const now = new Date(nowMs).toISOString();
    const expiresAtMs = nowMs + ttlSeconds * 1000;
    // An open session only moves its deadline: nothing else to decide, and nothing to read first.
    if (this.touchOpen.get({ now, expiresAtMs, sessionId })) {
      this.armInBackground();
      return { reopened: false };
    }
    const existing = this.byId.get({ sessionId });
    if (!existing) {
      db.insert(schema.sessions).values({ sessionId, threadId, status: "open", openedAt: now, lastActivityAt: now, expiresAtMs }).run();
    } else {
      this.update.run({ now, expiresAtMs, sessionId });
      if (existing.status === "closed") events.append("session.reopened", null, { sessionId, threadId, closedAt: existing.closedAt, closeReason: existing.closeReason });
    }
    this.armInBackground();
    return { reopened: existing?.status === "closed" };
  }

  get(sessionId: string): SessionView | null {
    const row = this.deps.db.select().from(schema.sessions).where(eq(schema.sessions.sessionId, sessionId)).get();
    return row ? view(row) : null;
  }

  /** Explicit close: idempotent (closing a closed session answers it as it is, no second event); unknown → not_found. */
  close(sessionId: string): Result<{ session: SessionView; changed: boolean }> {
    const row = this.deps.db.select().from(schema.sessions).where(eq(schema.sessions.sessionId, sessionId)).get();
    if (!row) return failure("not_found", "session not found");
    if (row.status === "closed") return { ok: true, session: view(row), changed: false };
    const closed = this.closeRow(row, "explicit", Date.now());
    this.armInBackground();
    return { ok: true, session: closed, changed: true };
  }

  /**
   * Closes open sessions whose deadline is at or before `nowMs`, at most `config.sessions.expiryBatch`
   * per call (oldest deadline first), then re-arms: soon when more are due, else at the next deadline.
   */
  async expireDue(nowMs = Date.now()): Promise<{ closed: number; more: boolean }> {
    const { db } = this.deps;
    const due = db
      .select()
      .from(schema.sessions)
      .where(and(eq(schema.sessions.status, "open"), isNotNull(schema.sessions.expiresAtMs), lte(schema.sessions.expiresAtMs, nowMs)))
      .orderBy(asc(schema.sessions.expiresAtMs))
      .limit(config.sessions.expiryBatch + 1)
      .all();
    const batch = due.slice(0, config.sessions.expiryBatch);
    db.transaction(() => {
      for (const row of batch) this.closeRow(row, "idle_timeout", nowMs);
    });
    await this.arm();
    return { closed: batch.length, more: due.length > batch.length };
  }

  /** Keeps one future `onSessionExpiry` schedule at (or before) the earliest open deadline; serialized. */
  arm(): Promise<void> {
    const run = this.arming.then(() => this.applyArm());
    this.arming = run.catch(() => undefined);
    return run;
  }

  /** Re-arming off the request path: a scheduler failure is logged, and the next touch, close or firing re-arms. */
  private armInBackground(): void {
    this.arm().catch((error: unknown) => logFailure("session expiry re-arm failed", error));
  }

  private async applyArm(): Promise<void> {
    const { scheduler } = this.deps;
    const earliest = this.earliestOpen.get()?.at ?? null;
    const now = Date.now();
    // Whole seconds, rounded up (the SDK stores seconds); never in the past, so a backlog drains one batch per alarm.
    const target = earliest === null ? null : Math.ceil(Math.max(earliest, now + 1000) / 1000);
    // The row armed before is still to come and fires first: nothing to look up (every turn re-arms; issue 12 §8).
    if (target !== null && this.armedAt * 1000 > now && this.armedAt <= target) return;
    // A row already due is the one the SDK is running (it deletes it afterwards): only future rows count.
    const rows = (await scheduler.listSchedules()).filter((row) => row.callback === SESSION_EXPIRY_CALLBACK && row.time * 1000 > now);
    this.armedAt = 0;
    if (target === null) {
      for (const row of rows) await scheduler.cancelSchedule(row.id);
      return;
    }
    // An earlier row fires first and re-arms from there: deadlines only move later as sessions are used.
    const earlier = rows.filter((row) => row.time <= target);
    if (earlier.length > 0) {
      this.armedAt = Math.min(...earlier.map((row) => row.time));
      return;
    }
    for (const row of rows) await scheduler.cancelSchedule(row.id);
    await scheduler.schedule(new Date(target * 1000), SESSION_EXPIRY_CALLBACK);
    this.armedAt = target;
  }

  private closeRow(row: typeof schema.sessions.$inferSelect, reason: SessionCloseReason, nowMs: number): SessionView {
    const closedAt = new Date(nowMs).toISOString();
    this.deps.db.update(schema.sessions).set({ status: "closed", closedAt, closeReason: reason, expiresAtMs: null }).where(eq(schema.sessions.sessionId, row.sessionId)).run();
    this.deps.events.append("session.closed", null, { sessionId: row.sessionId, threadId: row.threadId, reason, lastActivityAt: row.lastActivityAt });
    return view({ ...row, status: "closed", closedAt, closeReason: reason, expiresAtMs: null });
  }
}

function view(row: typeof schema.sessions.$inferSelect): SessionView {
  return {
    sessionId: row.sessionId,
    threadId: row.threadId,
    status: row.status === "closed" ? "closed" : "open",
    openedAt: row.openedAt,
    lastActivityAt: row.lastActivityAt,
    expiresAt: row.expiresAtMs === null ? null : new Date(row.expiresAtMs).toISOString(),
    closedAt: row.closedAt,
    closeReason: (row.closeReason as SessionCloseReason | null) ?? null,
  };
}
