import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Lifecycle } from "../../../core/runtime/lifecycle";
import type { Predicate } from "../../../core/wakes/predicate";
import { indexRows, subscriptionSpecSchema, type CandidateSubscription, type Eligibility, type IndexProbe } from "../../../core/wakes/subscription-index";
import { normalizeTokens, type TypedToken } from "../../../core/wakes/tokens";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import type { Agent } from "../../../schema/agents/agents";
import type { Subscription, SubscriptionSpec } from "../../../schema/agents/subscriptions";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";
import { pageByCreated } from "../../shared/keyset";
import { handWritten } from "../../shared/sqlite";
import { HeldTokens } from "./held-tokens";

/** Active subscriptions one agent may hold; each materializes at most 32 index rows. */
export const MAX_SUBSCRIPTIONS_PER_AGENT = 100;

/** A candidate reached through the index, joined with its agent's directory snapshot. */
export interface IndexedCandidate extends CandidateSubscription {
  agent: Agent;
}

/**
 * An agent's subscriptions and the materialized token index `(class, namespace, value) → subscription`
 * (`subscription_tokens`). Every write changes both tables in one transaction, so the index never
 * names a subscription that does not exist, nor misses one that does. Deletes tombstone the
 * subscription row (`deleted_at`) and remove its index rows.
 */
export class SubscriptionStore {
  /** Every run's report and every dispatch probes the index: the lookup is built once (issue 12 §8). */
  private readonly candidatesQuery;
  /** Every run report asks it (issue 12 §8, session 11): one statement for any number of probes, rendered once. */
  private readonly otherSubscriberQuery;
  /** The index's tokens (a superset), so a report whose tokens nobody holds asks no statement (session 14). */
  private readonly heldTokens: HeldTokens;

  constructor(private readonly db: TenantDb) {
    this.heldTokens = new HeldTokens(db);
    const t = schema.subscriptionTokens;
    const s = schema.subscriptions;
    const a = schema.agentDirectory;
    this.candidatesQuery = db
      .select({ id: s.id, agentId: s.agentId, tokens: s.tokens, predicate: s.predicate, eligibility: s.eligibility, sessionId: s.sessionId, lifecycle: a.lifecycle, record: a.record })
      .from(t)
      .innerJoin(s, and(eq(s.id, t.subscriptionId), isNull(s.deletedAt)))
      .innerJoin(a, eq(a.id, s.agentId))
      .where(and(eq(t.tokenClass, sql.placeholder("tokenClass")), eq(t.tokenNamespace, sql.placeholder("tokenNamespace")), eq(t.tokenValue, sql.placeholder("tokenValue"))))
      .prepare();
    // The probes travel as ONE JSON parameter of [class, namespace, value] triples: `json_each` is the outer loop and each
    // triple is a primary-key prefix lookup of subscription_tokens (test/integration/subscription-probe.test.ts asks
    // EXPLAIN QUERY PLAN). An OR over the probes had a different text per probe count and was built by drizzle per call.
    this.otherSubscriberQuery = handWritten<{ one: number }>((v) => sql`SELECT 1 AS one FROM json_each(${v.probes}) AS probe
      JOIN subscription_tokens AS t ON t.token_class = probe.value ->> 0 AND t.token_namespace = probe.value ->> 1 AND t.token_value = probe.value ->> 2
      JOIN subscriptions AS s ON s.id = t.subscription_id AND s.deleted_at IS NULL
      JOIN agent_directory AS a ON a.id = s.agent_id
      WHERE s.agent_id <> ${v.agentId} LIMIT 1`)(db);
  }

  /** The agent's lifecycle from the tenant directory, or null when the agent is not in this tenant. */
  agentLifecycle(agentId: string): Lifecycle | null {
    const row = this.db.select({ lifecycle: schema.agentDirectory.lifecycle }).from(schema.agentDirectory).where(eq(schema.agentDirectory.id, agentId)).get();
    return row ? (row.lifecycle as Lifecycle) : null;
  }

  countActive(agentId: string): number {
    const row = this.db
      .select({ n: sql<number>`count(*)` })
      .from(schema.subscriptions)
      .where(and(eq(schema.subscriptions.agentId, agentId), isNull(schema.subscriptions.deletedAt)))
      .get();
    return row?.n ?? 0;
  }

  /**
   * `POST /v1/agents/:id/subscriptions`: the spec validated, the agent live and under its cap, then created.
   * `keyedId` (under an Idempotency-Key): a subscription already holding it was created by the first attempt and is the answer.
   */
  subscribe(agentId: string, spec: SubscriptionSpec, keyedId?: string): Result<{ subscription: Subscription }> {
    const parsed = subscriptionSpecSchema.safeParse(spec);
    if (!parsed.success) return failure("validation_failed", parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
    const earlier = keyedId === undefined ? undefined : this.db.select().from(schema.subscriptions).where(eq(schema.subscriptions.id, keyedId)).get();
    if (earlier && (earlier.agentId !== agentId || earlier.deletedAt)) return failure("idempotency_conflict", `the subscription this Idempotency-Key created (${keyedId}) was deleted since; retry with a new Idempotency-Key`);
    if (earlier) return { ok: true, subscription: toSubscription(earlier) };
    const lifecycle = this.agentLifecycle(agentId);
    if (!lifecycle) return failure("not_found", "agent not found");
    if (lifecycle === "destroyed") return failure("agent_destroyed", "the agent is destroyed and cannot subscribe");
    if (this.countActive(agentId) >= MAX_SUBSCRIPTIONS_PER_AGENT) {
      return failure("conflict", `an agent may hold at most ${MAX_SUBSCRIPTIONS_PER_AGENT} subscriptions`);
    }
    return { ok: true, subscription: this.create(agentId, parsed.data, keyedId) };
  }

  create(agentId: string, spec: SubscriptionSpec, id: string = randomId("sub_")): Subscription {
    const subscription: Subscription = {
      id,
      agentId,
      tokens: normalizeTokens(spec.tokens),
      createdAt: nowIso(),
      ...(spec.predicate ? { predicate: spec.predicate } : {}),
      ...(spec.eligibility ? { eligibility: spec.eligibility } : {}),
      ...(spec.sessionId ? { sessionId: spec.sessionId } : {}),
    };
    const rows = indexRows(subscription);
    // Before the insert: the kept tokens stay a superset whatever happens to the transaction.
    this.heldTokens.add(rows);
    this.db.transaction((tx) => {
      tx.insert(schema.subscriptions)
        .values({
          id: subscription.id,
          agentId,
          tokens: subscription.tokens,
          predicate: subscription.predicate ?? null,
          eligibility: subscription.eligibility ?? null,
          sessionId: subscription.sessionId ?? null,
          createdAt: subscription.createdAt,
        })
        .run();
      for (const row of rows) {
        tx.insert(schema.subscriptionTokens)
          .values({ tokenClass: row.tokenClass, tokenNamespace: row.tokenNamespace, tokenValue: row.tokenValue, subscriptionId: row.subscriptionId, agentId: row.agentId })
          .run();
      }
    });
    return subscription;
  }

  /** Active subscriptions of one agent, oldest first, keyset-paginated on (createdAt, id). */
  list(agentId: string, limit: number, after?: { c: string; i: string }): { data: Subscription[]; last: { c: string; i: string } | null } {
    const s = schema.subscriptions;
    return pageByCreated(this.db, s, limit, after, toSubscription, [eq(s.agentId, agentId), isNull(s.deletedAt)]);
  }

  /** Tombstones one active subscription of this agent and drops its index rows; null when there is none. */
  remove(agentId: string, subscriptionId: string): Subscription | null {
    const s = schema.subscriptions;
    const row = this.db.select().from(s).where(and(eq(s.id, subscriptionId), eq(s.agentId, agentId), isNull(s.deletedAt))).get();
    if (!row) return null;
    this.db.transaction((tx) => this.tombstone(tx as unknown as TenantDb, [row.id]));
    return toSubscription(row);
  }

  /** Destroy: tombstones every active subscription of the agent and drops their index rows. */
  removeAllForAgent(agentId: string): number {
    const s = schema.subscriptions;
    const ids = this.db.select({ id: s.id }).from(s).where(and(eq(s.agentId, agentId), isNull(s.deletedAt))).all().map((row) => row.id);
    if (ids.length > 0) this.db.transaction((tx) => this.tombstone(tx as unknown as TenantDb, ids));
    return ids.length;
  }

  /** Index rows of one subscription (diagnostics and tests). */
  indexRowsOf(subscriptionId: string): Array<{ tokenClass: string; tokenNamespace: string; tokenValue: string }> {
    return this.db
      .select({ tokenClass: schema.subscriptionTokens.tokenClass, tokenNamespace: schema.subscriptionTokens.tokenNamespace, tokenValue: schema.subscriptionTokens.tokenValue })
      .from(schema.subscriptionTokens)
      .where(eq(schema.subscriptionTokens.subscriptionId, subscriptionId))
      .all();
  }

  /**
   * One indexed lookup (primary-key prefix of `subscription_tokens`) for one batch token, joined with
   * the subscription and the agent's directory entry. Cost is the number of postings of that token.
   * Subscriptions whose agent is missing from the directory cannot be woken and are not returned.
   */
  candidatesFor(probe: IndexProbe): IndexedCandidate[] {
    return this.candidatesQuery
      .all({ tokenClass: probe.tokenClass, tokenNamespace: probe.tokenNamespace, tokenValue: probe.tokenValue })
      .map((row) => ({
        id: row.id,
        agentId: row.agentId,
        tokens: row.tokens as TypedToken[],
        ...(row.predicate ? { predicate: row.predicate as Predicate } : {}),
        ...(row.eligibility ? { eligibility: row.eligibility as Eligibility } : {}),
        ...(row.sessionId ? { sessionId: row.sessionId } : {}),
        agentLifecycle: row.lifecycle as Lifecycle,
        agent: row.record as unknown as Agent,
      }));
  }

  /**
   * Whether any agent other than `agentId` holds a live subscription indexed under one of these tokens:
   * the same joins as `candidatesFor`, asked once for all probes (issue 12 §8: it was one lookup per probe
   * on every run report). Each probe is a primary-key prefix lookup of `subscription_tokens`.
   */
  anyOtherSubscriber(probes: readonly IndexProbe[], agentId: string): boolean {
    if (probes.length === 0 || this.heldTokens.noneHeld(probes)) return false;
    const triples = probes.map((probe) => [probe.tokenClass, probe.tokenNamespace, probe.tokenValue]);
    return this.otherSubscriberQuery.get({ probes: JSON.stringify(triples), agentId }) !== undefined;
  }

  private tombstone(tx: TenantDb, ids: string[]): void {
    const at = nowIso();
    // Bound parameters per statement are limited in DO SQLite, so large sets go in slices.
    for (let i = 0; i < ids.length; i += 90) {
      const slice = ids.slice(i, i + 90);
      tx.update(schema.subscriptions).set({ deletedAt: at }).where(inArray(schema.subscriptions.id, slice)).run();
      tx.delete(schema.subscriptionTokens).where(inArray(schema.subscriptionTokens.subscriptionId, slice)).run();
    }
  }
}

function toSubscription(row: typeof schema.subscriptions.$inferSelect): Subscription {
  return {
    id: row.id,
    agentId: row.agentId,
    tokens: row.tokens as TypedToken[],
    createdAt: row.createdAt,
    ...(row.predicate ? { predicate: row.predicate as Predicate } : {}),
    ...(row.eligibility ? { eligibility: row.eligibility as Eligibility } : {}),
    ...(row.sessionId ? { sessionId: row.sessionId } : {}),
  };
}
