/**
 * Subscription matching over the materialized token index (seed 000 "Subscription token
 * strategy" and the `onNotifications` pseudo-code).
 *
 * Flow in the shell: `indexRows(sub)` are stored in SQLite when a subscription is created; for a
 * batch, the shell looks up `indexProbes(batch)` in that table (or `candidateSubscriptionIds` on
 * the in-memory model below), loads those candidates joined with their agent's lifecycle, fetches
 * only `entityIdsToFetch(batch)`, and calls `matchBatch`. Work is proportional to the batch and
 * the candidates, never to the number of subscriptions.
 *
 * Eligibility (all must hold, checked in this order; the first failure is the skip reason):
 *   1. the agent's lifecycle admits ingress (`active`), else `agent_dormant | agent_not_started | agent_destroyed`;
 *   2. `eligibility.activeFrom <= now` (inclusive), else `not_yet_active`;
 *   3. `now < eligibility.activeUntil` (exclusive), else `expired`;
 *   (an unparseable stored timestamp fails closed as `invalid_eligibility`)
 *   4. some subscription token is in the batch (any-of), else `no_token_match` (a stale index row);
 *   5. with a predicate: some fetched changed entity satisfies it, else `predicate_false`.
 * Timestamps are ISO-8601 UTC strings; `now` is epoch milliseconds.
 *
 * Index rows store the namespace as `'-'` for non-subtype tokens, exactly as `tokenKey` does, so
 * the composite (class, namespace, value) column set never holds NULL and lookups are plain equality.
 */
import { z } from "zod";
import type { NotificationBatch } from "./change-units";
import { admitIngress, type Lifecycle } from "../runtime/lifecycle";
import { evaluatePredicate, predicateSchema, predicateScope, type Predicate } from "./predicate";
import { compareStrings, normalizeTokens, tokenKey, typedTokenSchema, type TokenClass, type TypedToken } from "./tokens";

export interface Eligibility {
  /** ISO-8601 UTC; inclusive. */
  activeFrom?: string;
  /** ISO-8601 UTC; exclusive. */
  activeUntil?: string;
}

/** A subscription as matching reads it; the stored and API shape adds `createdAt` (schema/agents/subscriptions.ts). */
export interface Subscription {
  id: string;
  agentId: string;
  /** Any-of: one of these tokens in a batch makes the subscription a candidate. */
  tokens: TypedToken[];
  predicate?: Predicate;
  eligibility?: Eligibility;
  sessionId?: string;
}

/** A subscription as loaded for matching: joined with its agent's current lifecycle. */
export interface CandidateSubscription extends Subscription {
  agentLifecycle: Lifecycle;
}

/** A changed entity fetched by id; `type` is its record kind (`task`, `checklist`, `agent`, …) and roots predicate paths. */
export interface ChangedEntity {
  id: string;
  type: string;
  record: unknown;
}

export const SUBSCRIPTION_LIMITS = { maxTokens: 32 } as const;

/** Zod schema for eligibility; an empty window (`activeFrom >= activeUntil`) is rejected. */
export const eligibilitySchema = z
  .strictObject({
    activeFrom: z.iso.datetime({ error: "activeFrom must be an ISO-8601 UTC timestamp" }).optional(),
    activeUntil: z.iso.datetime({ error: "activeUntil must be an ISO-8601 UTC timestamp" }).optional(),
  })
  .refine((e) => !e.activeFrom || !e.activeUntil || Date.parse(e.activeFrom) < Date.parse(e.activeUntil), {
    message: "activeUntil must be later than activeFrom",
    path: ["activeUntil"],
  });

/** Zod schema for the client-supplied part of a subscription (id and agentId are assigned by the server). */
export const subscriptionSpecSchema = z.strictObject({
  tokens: z
    .array(typedTokenSchema)
    .min(1, "tokens must list at least one token")
    .max(SUBSCRIPTION_LIMITS.maxTokens, `tokens must list at most ${SUBSCRIPTION_LIMITS.maxTokens} tokens`),
  predicate: predicateSchema.optional(),
  eligibility: eligibilitySchema.optional(),
  /** A conversation the wakes join (their run's thread is `<agentId>:session:<sessionId>`); absent: each wake runs in a thread of its own. */
  sessionId: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/, "sessionId: letters, digits, _ and -")
    .optional(),
});

/** One materialized index row: `(tokenClass, tokenNamespace, tokenValue) → subscriptionId`. */
export interface IndexRow {
  tokenClass: TokenClass;
  /** The namespace, or `'-'` for semantic keys and entity ids. */
  tokenNamespace: string;
  tokenValue: string;
  tokenKey: string;
  subscriptionId: string;
  agentId: string;
}

/** An index lookup key for one batch token. */
export type IndexProbe = Pick<IndexRow, "tokenClass" | "tokenNamespace" | "tokenValue" | "tokenKey">;

function probe(token: TypedToken): IndexProbe {
  return {
    tokenClass: token.tokenClass,
    tokenNamespace: token.tokenNamespace ?? "-",
    tokenValue: token.tokenValue,
    tokenKey: tokenKey(token),
  };
}

/** The rows to store for a subscription: one per distinct token, in `tokenKey` order. */
export function indexRows(subscription: Pick<Subscription, "id" | "agentId" | "tokens">): IndexRow[] {
  return normalizeTokens(subscription.tokens).map((token) => ({
    ...probe(token),
    subscriptionId: subscription.id,
    agentId: subscription.agentId,
  }));
}

/** The lookups to run against the index for a batch: one per distinct batch token. */
export function indexProbes(batch: Pick<NotificationBatch, "typedTokens">): IndexProbe[] {
  return normalizeTokens(batch.typedTokens).map(probe);
}

/** The only ids the shell fetches: values of `entityId` tokens, sorted and unique. Other classes never hit entity storage. */
export function entityIdsToFetch(batch: Pick<NotificationBatch, "typedTokens">): string[] {
  const ids = new Set<string>();
  for (const token of batch.typedTokens) if (token.tokenClass === "entityId") ids.add(token.tokenValue);
  return [...ids].sort(compareStrings);
}

/** In-memory model of the token index: `tokenKey → sorted subscription ids`. */
export interface TokenIndex {
  readonly postings: ReadonlyMap<string, ReadonlyArray<string>>;
}

/** Builds the in-memory index from rows (for tests, benchmarks, or a shell-side cache). */
export function buildTokenIndex(rows: Iterable<IndexRow>): TokenIndex {
  const sets = new Map<string, Set<string>>();
  for (const row of rows) {
    const set = sets.get(row.tokenKey) ?? new Set<string>();
    set.add(row.subscriptionId);
    sets.set(row.tokenKey, set);
  }
  const postings = new Map<string, string[]>();
  for (const [key, ids] of sets) postings.set(key, [...ids].sort(compareStrings));
  return { postings };
}

/** Subscription ids reachable from the batch's tokens; cost is the batch's postings, not the index size. */
export function candidateSubscriptionIds(index: TokenIndex, batch: Pick<NotificationBatch, "typedTokens">): string[] {
  const ids = new Set<string>();
  for (const { tokenKey: key } of indexProbes(batch)) for (const id of index.postings.get(key) ?? []) ids.add(id);
  return [...ids].sort(compareStrings);
}

export type SkipReason =
  | "agent_dormant"
  | "agent_not_started"
  | "agent_destroyed"
  | "invalid_eligibility"
  | "not_yet_active"
  | "expired"
  | "no_token_match"
  | "predicate_false";

export interface SubscriptionMatch {
  subscriptionId: string;
  agentId: string;
  /** The subscription's tokens found in the batch, sorted. */
  matchedTokenKeys: string[];
  /** Entities that satisfied the predicate, sorted; empty for a subscription without predicate. */
  matchedEntityIds: string[];
}

export interface MatchOutcome {
  /** Sorted by subscription id, so the result does not depend on candidate order. */
  matches: SubscriptionMatch[];
  skipped: Array<{ subscriptionId: string; agentId: string; reason: SkipReason }>;
}

/** The first eligibility failure for a candidate at `now`, or null when it may wake. */
export function eligibilityFailure(candidate: CandidateSubscription, now: number): SkipReason | null {
  const ingress = admitIngress(candidate.agentLifecycle);
  if (!ingress.admit) return ingress.code;
  const { activeFrom, activeUntil } = candidate.eligibility ?? {};
  const from = activeFrom === undefined ? -Infinity : Date.parse(activeFrom);
  const until = activeUntil === undefined ? Infinity : Date.parse(activeUntil);
  if (Number.isNaN(from) || Number.isNaN(until)) return "invalid_eligibility";
  if (now < from) return "not_yet_active";
  if (now >= until) return "expired";
  return null;
}

/**
 * Evaluates token any-of, eligibility and predicate for index-prefiltered candidates. Cost is
 * O(batch tokens + entities + Σ candidate (tokens + predicate × entities)). Duplicate candidates
 * (a subscription reached through several tokens) are evaluated once.
 */
export function matchBatch(
  batch: Pick<NotificationBatch, "typedTokens">,
  candidates: ReadonlyArray<CandidateSubscription>,
  entitiesById: ReadonlyMap<string, ChangedEntity>,
  now: number,
): MatchOutcome {
  const batchKeys = new Set(batch.typedTokens.map(tokenKey));
  const scopes: Array<{ id: string; scope: Record<string, unknown> }> = [];
  for (const id of entityIdsToFetch(batch)) {
    const entity = entitiesById.get(id);
    if (entity) scopes.push({ id, scope: predicateScope(entity.type, entity.record) });
  }

  const seen = new Set<string>();
  const matches: SubscriptionMatch[] = [];
  const skipped: MatchOutcome["skipped"] = [];
  for (const candidate of candidates) {
    if (seen.has(candidate.id)) continue;
    seen.add(candidate.id);
    const skip = (reason: SkipReason) => skipped.push({ subscriptionId: candidate.id, agentId: candidate.agentId, reason });

    const ineligible = eligibilityFailure(candidate, now);
    if (ineligible) {
      skip(ineligible);
      continue;
    }
    const matchedTokenKeys = [...new Set(candidate.tokens.map(tokenKey))].filter((key) => batchKeys.has(key)).sort(compareStrings);
    if (matchedTokenKeys.length === 0) {
      skip("no_token_match");
      continue;
    }
    const predicate = candidate.predicate;
    const matchedEntityIds = predicate ? scopes.filter(({ scope }) => evaluatePredicate(predicate, scope)).map(({ id }) => id) : [];
    if (predicate && matchedEntityIds.length === 0) {
      skip("predicate_false");
      continue;
    }
    matches.push({ subscriptionId: candidate.id, agentId: candidate.agentId, matchedTokenKeys, matchedEntityIds });
  }
  matches.sort((a, b) => compareStrings(a.subscriptionId, b.subscriptionId));
  skipped.sort((a, b) => compareStrings(a.subscriptionId, b.subscriptionId));
  return { matches, skipped };
}
