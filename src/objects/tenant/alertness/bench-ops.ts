import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { entityIdsToFetch } from "../../../core/wakes/subscription-index";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { evaluate, type Dispatcher } from "./dispatcher";
import type { PendingBatch } from "./notification-log";
import type { TenantDb } from "../types";
import { storageFootprint, type StorageFootprint } from "../../shared/storage-footprint";
import type { Authority } from "../../../schema/agents/messages";
import type { Subscription, SubscriptionSpec } from "../../../schema/agents/subscriptions";
import type { TypedToken } from "../../../core/wakes/tokens";

// Bench seam for `bench/alertness.mjs` (VIGIL_BENCH=enabled only, never in production). The route
// half runs in the Worker; `runAlertnessBenchOp` runs inside the TenantDO (`TenantDO.benchAlertness`).
// workerd's clock stands still during synchronous work, so nothing here times itself: the bench
// times `match` from outside with the T(N) − T(1) subtraction, as bench/history.mjs does.

export const AlertnessBenchOp = z.discriminatedUnion("op", [
  /** Bulk subscriptions through the same validation, lifecycle check and per-agent cap as the API. */
  z.object({ op: z.literal("subscribe"), items: z.array(z.object({ agentId: z.string(), spec: z.unknown() })).min(1).max(2_000) }),
  /**
   * Re-runs the dispatcher's matching for the journal batch naming `entityId`, `iterations` times,
   * without sending or marking anything: index prefilter + entity fetch + evaluate, and with
   * `jobs` also the wake-job construction (observation, size fitting).
   */
  z.object({ op: z.literal("match"), entityId: z.string().min(1).max(128), iterations: z.number().int().min(1).max(10_000), jobs: z.boolean().default(false) }),
  /**
   * Sizes: active subscriptions, index rows, batches / deliveries recorded for `source`, and the tenant event log's
   * head seq (the fan-out bench follows the tenant stream from there: a replay from 0 would hydrate every agent's events).
   */
  z.object({ op: z.literal("counts"), source: z.string().max(256).optional() }),
  /** The TenantDO's SQLite size and rows per table (bench "bytes per chat turn"). */
  z.object({ op: z.literal("storage") }),
]);
export type AlertnessBenchOp = z.output<typeof AlertnessBenchOp>;

export type AlertnessBenchAnswer =
  | { op: "subscribe"; done: number }
  | { op: "match"; done: number; logicalChangeKey: string; matchedCount: number | null; candidates: number; matches: number; jobs: number }
  | { op: "counts"; subscriptions: number; indexRows: number; batches: number | null; deliveries: number | null; eventsHead: number }
  | ({ op: "storage" } & StorageFootprint);

export interface AlertnessBenchDeps {
  db: TenantDb;
  dispatcher: Dispatcher;
  subscribe(agentId: string, spec: SubscriptionSpec): Result<{ subscription: Subscription }>;
  sql: SqlStorage;
}

/** Runs inside the TenantDO. */
export function runAlertnessBenchOp(deps: AlertnessBenchDeps, op: AlertnessBenchOp): Result<{ answer: AlertnessBenchAnswer }> {
  const { db, dispatcher } = deps;
  switch (op.op) {
    case "subscribe": {
      for (const [i, item] of op.items.entries()) {
        // TenantDO.createSubscription validates the spec exactly as POST /v1/agents/:id/subscriptions does.
        const created = deps.subscribe(item.agentId, item.spec as SubscriptionSpec);
        if (!created.ok) return failure(created.code, `items[${i}]: ${created.message}`);
      }
      return { ok: true, answer: { op: "subscribe", done: op.items.length } };
    }
    case "match": {
      const b = schema.notificationBatches;
      const row = db
        .select()
        .from(b)
        .where(and(eq(b.source, "journal"), sql`instr(${b.tokens}, ${op.entityId}) > 0`))
        .orderBy(desc(b.createdAt))
        .limit(1)
        .get();
      if (!row) return failure("not_found", `no journal batch names ${op.entityId}`);
      const pending: PendingBatch = {
        batch: { logicalChangeKey: row.logicalChangeKey, changeUnitKeys: row.changeUnitKeys, typedTokens: row.tokens as TypedToken[] },
        origin: row.origin,
        source: row.source,
        authority: row.authority as Authority,
        payload: row.payload ?? undefined,
      };
      const tenantId = dispatcher["deps"].tenantId();
      let last = { candidates: 0, matches: 0, jobs: 0 };
      for (let i = 0; i < op.iterations; i++) {
        // The body of Dispatcher.dispatchBatch up to (not including) the queue send.
        const candidates = dispatcher["candidates"](pending.batch);
        const entities = candidates.length > 0 ? dispatcher["fetchEntities"](entityIdsToFetch(pending.batch)) : new Map();
        const outcome = evaluate(pending.batch, candidates, entities, Date.now());
        let jobs = 0;
        if (op.jobs) {
          const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
          for (const match of outcome.wakes) if (dispatcher["wakeJob"](tenantId, pending, match, byId.get(match.subscriptionId)!.agent, entities)) jobs += 1;
        }
        last = { candidates: candidates.length, matches: outcome.wakes.length, jobs };
      }
      return { ok: true, answer: { op: "match", done: op.iterations, logicalChangeKey: row.logicalChangeKey, matchedCount: row.matchedCount, ...last } };
    }
    case "counts": {
      const subscriptions = db.select({ n: count() }).from(schema.subscriptions).where(isNull(schema.subscriptions.deletedAt)).get()?.n ?? 0;
      const indexRows = db.select({ n: count() }).from(schema.subscriptionTokens).get()?.n ?? 0;
      const eventsHead = db.select({ seq: schema.tenantEvents.seq }).from(schema.tenantEvents).orderBy(desc(schema.tenantEvents.seq)).limit(1).get()?.seq ?? 0;
      if (op.source === undefined) return { ok: true, answer: { op: "counts", subscriptions, indexRows, batches: null, deliveries: null, eventsHead } };
      const batches = db.select({ n: count() }).from(schema.notificationBatches).where(eq(schema.notificationBatches.source, op.source)).get()?.n ?? 0;
      const deliveries = db.select({ n: count() }).from(schema.inboundDeliveries).where(eq(schema.inboundDeliveries.source, op.source)).get()?.n ?? 0;
      return { ok: true, answer: { op: "counts", subscriptions, indexRows, batches, deliveries, eventsHead } };
    }
    case "storage":
      return { ok: true, answer: { op: "storage", ...storageFootprint(deps.sql) } };
  }
}

