import { inArray } from "drizzle-orm";
import { verifyBatchProvenance, subscriptionWake, type NotificationBatch } from "../../../core/wakes/change-units";
import { entityIdsToFetch, indexProbes, matchBatch, type ChangedEntity, type MatchOutcome, type SkipReason, type SubscriptionMatch } from "../../../core/wakes/subscription-index";
import { subscriptionObservation, type FetchedEntity } from "../../../core/wakes/wake-observation";
import * as schema from "../../../db/tenant-schema";
import type { Agent } from "../../../schema/agents/agents";
import { AUTHORITIES, type Authority } from "../../../schema/agents/messages";
import type { WakeJob } from "../../../schema/agents/wake";
import type { NotificationLog, PendingBatch } from "./notification-log";
import type { IndexedCandidate, SubscriptionStore } from "./subscriptions";
import type { TenantDb } from "../types";
import { logEvent } from "../../../log";
import { config } from "../../../config";

export interface DispatcherDeps {
  db: TenantDb;
  notifications: NotificationLog;
  subscriptions: SubscriptionStore;
  queue: Queue<WakeJob>;
  tenantId(): string;
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void;
  /** Arms a later retry (the TenantDO alarm) after a failed send; the batch stays pending. */
  retryLater(delayMs: number): void;
  /** The tenant snapshot version in force: each wake carries it, so the woken agent need not ask for it. */
  snapshotVersion?: () => number;
  now?: () => number;
}

/** Cloudflare Queues limits: 100 messages and 256 KB per sendBatch, 128 KB per message. */
export const QUEUE_LIMITS = { batchMessages: 100, batchBytes: 250_000, messageBytes: 120_000 } as const;

/** Agent lifecycles the directory reports but the agent itself settles (skipped_sleeping / skipped_destroyed). */
const AGENT_SETTLED: ReadonlySet<SkipReason> = new Set(["agent_dormant", "agent_not_started", "agent_destroyed"]);
const PAGE = 50;
const RETRY = { baseMs: 5_000, maxMs: 10 * 60_000 } as const;
const SQL_IN_SLICE = 90;

export type BatchDispatch =
  | { status: "dispatched"; logicalChangeKey: string; candidates: number; wakes: number; skipped: Partial<Record<SkipReason, number>> }
  | { status: "failed_closed"; logicalChangeKey: string; code: "missing_change_provenance" | "invalid_change_provenance" }
  | { status: "cascade_limited"; logicalChangeKey: string; cascadeDepth: number };

/**
 * Subscription dispatch for one tenant (SPEC §4, seed 000 `onNotifications`): for each pending
 * notification batch, prefilter candidates through the token index (one indexed lookup per
 * distinct batch token), fetch only the batch's `entityId` entities, evaluate with the core
 * matcher, and queue one wake per match on WAKE_QUEUE. The batch is marked dispatched only after
 * every wake was sent, so a crash or a failed send re-dispatches it later; runKey dedupe in the
 * agent makes that repetition harmless. Passes are single-flight per DO instance.
 */
export class Dispatcher {
  private running: Promise<void> | null = null;
  private again = false;
  /** Consecutive passes that left a batch behind (in memory: an eviction simply retries sooner). */
  private failedPasses = 0;

  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * Whether a pass would find nothing to do: no pass is under way, and no batch was recorded since the last
   * pass read the pending list nor left behind by it (NotificationLog.mayHaveUnseenPending, set by the insert
   * itself). A caller that recorded nothing may then skip the pass (issue 12 §8: run reports). It does not
   * rely on writers reaching their own dispatch: a writer that threw between its commit and its dispatch
   * leaves the flag set, and the next caller runs the pass (session 9).
   */
  nothingToDispatch(): boolean {
    return !this.running && !this.deps.notifications.mayHaveUnseenPending();
  }

  /**
   * Drains every pending batch; never throws. A batch whose dispatch fails stays pending and is set
   * aside for this pass (it cannot block the others); a retry is then armed with backoff.
   */
  dispatchPending(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let failed = 0;
        do {
          this.again = false;
          failed = await this.drain();
        } while (this.again && failed === 0);
        this.failedPasses = failed > 0 ? this.failedPasses + 1 : 0;
        if (failed > 0) {
          this.deps.notifications.notePendingLeft();
          this.deps.retryLater(Math.min(RETRY.baseMs * 2 ** (this.failedPasses - 1), RETRY.maxMs));
        }
      } catch (error) {
        this.deps.notifications.notePendingLeft();
        console.error(JSON.stringify({ level: "error", msg: "subscription dispatch pass failed", tenantId: this.deps.tenantId(), error: String(error) }));
        this.deps.retryLater(RETRY.baseMs);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** One pass over the pending batches, oldest first; returns how many failed. */
  private async drain(): Promise<number> {
    const failed = new Set<string>();
    // Synchronously before the first read: a batch recorded after this sets the flag again.
    this.deps.notifications.notePassStarted();
    for (;;) {
      const page = this.deps.notifications.pending(PAGE + failed.size).filter((pending) => !failed.has(pending.batch.logicalChangeKey));
      if (page.length === 0) return failed.size;
      for (const pending of page) {
        try {
          await this.dispatchBatch(pending);
        } catch (error) {
          failed.add(pending.batch.logicalChangeKey);
          console.error(JSON.stringify({ level: "error", msg: "subscription dispatch failed; batch stays pending", tenantId: this.deps.tenantId(), logicalChangeKey: pending.batch.logicalChangeKey, error: String(error) }));
        }
      }
    }
  }

  /** Matches one batch and queues its wakes; throws when the queue refuses (the batch stays pending). */
  async dispatchBatch(pending: PendingBatch): Promise<BatchDispatch> {
    const { batch } = pending;
    const tenantId = this.deps.tenantId();
    const provenance = verifyBatchProvenance(batch);
    if (!provenance.ok) {
      console.warn(JSON.stringify({ level: "warn", msg: "notification batch failed closed", code: provenance.code, tenantId, logicalChangeKey: batch.logicalChangeKey, source: pending.source }));
      this.deps.audit("system", "notification.failed_closed", batch.logicalChangeKey || null, { code: provenance.code, message: provenance.message, source: pending.source });
      this.deps.notifications.markDispatched(batch.logicalChangeKey, 0);
      return { status: "failed_closed", logicalChangeKey: batch.logicalChangeKey, code: provenance.code };
    }

    const cascadeDepth = pending.cascadeDepth ?? 0;
    if (cascadeDepth > config.run.maxCascadeDepth) {
      // Agents waking each other in a ring would otherwise run forever; the chain stops here, on the record.
      this.deps.audit("system", "notification.cascade_limited", batch.logicalChangeKey, { source: pending.source, cascadeDepth, limit: config.run.maxCascadeDepth });
      this.deps.notifications.markDispatched(batch.logicalChangeKey, 0);
      return { status: "cascade_limited", logicalChangeKey: batch.logicalChangeKey, cascadeDepth };
    }

    const candidates = this.candidates(batch);
    const entities = candidates.length > 0 ? this.fetchEntities(entityIdsToFetch(batch)) : new Map<string, FetchedEntity>();
    const outcome = evaluate(batch, candidates, entities, this.deps.now?.() ?? Date.now());
    const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
    const jobs: WakeJob[] = [];
    const snapshot = this.deps.snapshotVersion ? { version: this.deps.snapshotVersion(), at: this.deps.now?.() ?? Date.now() } : undefined;
    for (const match of outcome.wakes) {
      // An agent's own activity never wakes itself: a subscription to its own messages would loop.
      if (pending.source === `agent:${match.agentId}`) continue;
      const candidate = byId.get(match.subscriptionId)!;
      const job = this.wakeJob(tenantId, pending, { ...match, sessionId: candidate.sessionId }, candidate.agent, entities);
      if (!job) continue;
      jobs.push({ ...job, ...(snapshot && { snapshot }) });
    }
    for (const chunk of chunkJobs(jobs)) {
      await this.deps.queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
    }
    this.deps.notifications.markDispatched(batch.logicalChangeKey, jobs.length);

    const skipped: Partial<Record<SkipReason, number>> = {};
    for (const skip of outcome.skipped) skipped[skip.reason] = (skipped[skip.reason] ?? 0) + 1;
    logEvent("info", "notification batch dispatched", { tenantId, logicalChangeKey: batch.logicalChangeKey, source: pending.source, candidates: byId.size, wakes: jobs.length, skipped });
    return { status: "dispatched", logicalChangeKey: batch.logicalChangeKey, candidates: byId.size, wakes: jobs.length, skipped };
  }

  /** One index lookup per distinct batch token; a subscription reached through several tokens appears once. */
  private candidates(batch: NotificationBatch): IndexedCandidate[] {
    const found = new Map<string, IndexedCandidate>();
    for (const probe of indexProbes(batch)) {
      for (const candidate of this.deps.subscriptions.candidatesFor(probe)) found.set(candidate.id, candidate);
    }
    return [...found.values()];
  }

  /** Only entityId values reach storage: journal rows first, then agent directory entries (agents subscribe to each other). */
  private fetchEntities(ids: string[]): Map<string, FetchedEntity> {
    const found = new Map<string, FetchedEntity>();
    const { db } = this.deps;
    for (const slice of slices(ids)) {
      for (const row of db.select().from(schema.journalEntities).where(inArray(schema.journalEntities.id, slice)).all()) {
        found.set(row.id, { kind: "journal", id: row.id, type: row.type, categoryId: row.categoryId, parentId: row.parentId, version: row.version, updatedAt: row.updatedAt, deletedAt: row.deletedAt, data: row.data });
      }
    }
    for (const slice of slices(ids.filter((id) => !found.has(id)))) {
      for (const row of db.select().from(schema.agentDirectory).where(inArray(schema.agentDirectory.id, slice)).all()) {
        found.set(row.id, { kind: "agent", id: row.id, agentKind: row.kind, displayName: row.displayName, lifecycle: row.lifecycle });
      }
    }
    return found;
  }

  private wakeJob(tenantId: string, pending: PendingBatch, match: SubscriptionMatch & { sessionId?: string | undefined }, agent: Agent, entities: Map<string, FetchedEntity>): WakeJob | null {
    const built = subscriptionWake(pending.batch, match);
    if (!built.ok) {
      console.warn(JSON.stringify({ level: "warn", msg: "subscription wake failed closed", code: built.code, tenantId, agentId: match.agentId, logicalChangeKey: pending.batch.logicalChangeKey }));
      return null;
    }
    const { wake } = built;
    const observation = subscriptionObservation({
      tokens: pending.batch.typedTokens,
      entities: [...entities.values()],
      allowedCategoryIds: agent.allowedCategoryIds ?? [],
      source: pending.source,
      origin: pending.origin,
      payload: pending.payload,
      trigger: { subscriptionId: match.subscriptionId, logicalChangeKey: wake.logicalChangeKey, matchedTokenKeys: match.matchedTokenKeys, matchedEntityIds: match.matchedEntityIds },
    });
    return fitJob({
      tenantId,
      agentId: wake.agentId,
      reason: wake.reason,
      runKey: wake.runKey,
      threadId: wake.threadId,
      authority: admittedAuthority(pending),
      logicalChangeKey: wake.logicalChangeKey,
      // Persisted with the wake in the agent's inbox: replay reuses the original provenance.
      input: { subscriptionId: wake.subscriptionId, changeUnitKeys: wake.changeUnitKeys, observation, cascadeDepth: pending.cascadeDepth ?? 0 },
    });
  }
}

/**
 * Core matching, then a second pass for candidates skipped only because of their agent's lifecycle
 * in the directory snapshot: those still get their wake, and the agent — the lifecycle authority —
 * settles it as skipped_sleeping / skipped_destroyed in its wake-run log.
 */
export function evaluate(
  batch: NotificationBatch,
  candidates: ReadonlyArray<IndexedCandidate>,
  entities: ReadonlyMap<string, FetchedEntity>,
  now: number,
): { wakes: SubscriptionMatch[]; skipped: MatchOutcome["skipped"] } {
  const changed = new Map<string, ChangedEntity>();
  for (const entity of entities.values()) changed.set(entity.id, changedEntity(entity));
  const first = matchBatch(batch, candidates, changed, now);
  const parked = new Set(first.skipped.filter((skip) => AGENT_SETTLED.has(skip.reason)).map((skip) => skip.subscriptionId));
  if (parked.size === 0) return { wakes: first.matches, skipped: first.skipped };
  const second = matchBatch(batch, candidates.filter((c) => parked.has(c.id)).map((c) => ({ ...c, agentLifecycle: "active" as const })), changed, now);
  return { wakes: [...first.matches, ...second.matches], skipped: first.skipped };
}

/** The predicate's view of an entity: its stored fields, with the indexed columns authoritative. */
function changedEntity(entity: FetchedEntity): ChangedEntity {
  if (entity.kind === "agent") return { id: entity.id, type: "agent", record: { id: entity.id, kind: entity.agentKind, displayName: entity.displayName, lifecycle: entity.lifecycle } };
  const { id, type, categoryId, parentId, version, updatedAt, deletedAt } = entity;
  return { id, type, record: { ...entity.data, id, categoryId, parentId, version, updatedAt, deletedAt } };
}

/** Events and webhooks are external evidence whatever was stored; an unknown label fails safe to the same. */
function admittedAuthority(pending: PendingBatch): Authority {
  if (pending.origin !== "local") return "external_evidence";
  return (AUTHORITIES as ReadonlyArray<string>).includes(pending.authority) ? pending.authority : "external_evidence";
}

const byteLength = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value)).length;

/** Keeps one wake under the per-message limit: entity fields go first, then the payload, each marked. */
export function fitJob(job: WakeJob): WakeJob {
  if (byteLength(job) <= QUEUE_LIMITS.messageBytes) return job;
  const observation = job.input.observation as ReturnType<typeof subscriptionObservation>;
  const data: Record<string, unknown> = {
    ...observation.data,
    entities: observation.data.entities.map((entity) => ("fields" in entity ? { ...entity, fields: {} } : entity)),
    truncated: "entity_fields",
  };
  let slim: WakeJob = { ...job, input: { ...job.input, observation: { ...observation, data } } };
  if (byteLength(slim) <= QUEUE_LIMITS.messageBytes) return slim;
  delete data.payload;
  data.truncated = "entity_fields_and_payload";
  slim = { ...job, input: { ...job.input, observation: { ...observation, data } } };
  return slim;
}

/** Splits wakes into sendBatch calls within the Queues count and size limits. */
export function chunkJobs(jobs: ReadonlyArray<WakeJob>): WakeJob[][] {
  const chunks: WakeJob[][] = [];
  let current: WakeJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    const size = byteLength(job);
    if (current.length > 0 && (current.length >= QUEUE_LIMITS.batchMessages || bytes + size > QUEUE_LIMITS.batchBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(job);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function slices<T>(items: ReadonlyArray<T>): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += SQL_IN_SLICE) out.push(items.slice(i, i + SQL_IN_SLICE));
  return out;
}
