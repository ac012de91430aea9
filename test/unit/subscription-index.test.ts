import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildNotificationBatch, changeUnits, subscriptionWake, type NotificationBatch } from "../../src/core/wakes/change-units";
import type { Lifecycle } from "../../src/core/runtime/lifecycle";
import {
  buildTokenIndex,
  candidateSubscriptionIds,
  entityIdsToFetch,
  indexProbes,
  indexRows,
  matchBatch,
  subscriptionSpecSchema,
  type CandidateSubscription,
  type ChangedEntity,
  type Subscription,
  type TokenIndex,
} from "../../src/core/wakes/subscription-index";
import { SemanticKeys, tokenKey, tokens, type TypedToken } from "../../src/core/wakes/tokens";

const TASK = tokens.semanticKey(SemanticKeys.TASK);
const CHECKLIST = tokens.semanticKey(SemanticKeys.CHECKLIST);
const NOW = Date.parse("2025-03-01T12:00:00Z");

function batchOf(typed: TypedToken[], counter = 1): NotificationBatch {
  const result = buildNotificationBatch({ changeUnits: [changeUnits.local("tenant_1", counter, "task", "t1")], tokens: typed });
  if (!result.ok) throw new Error(result.message);
  return result.batch;
}

const candidate = (sub: Subscription, agentLifecycle: Lifecycle = "active"): CandidateSubscription => ({ ...sub, agentLifecycle });
const entities = (...list: ChangedEntity[]) => new Map(list.map((e) => [e.id, e]));

const gymCoach: Subscription = { id: "sub_gym", agentId: "coach", tokens: [TASK], predicate: { eq: ["task.categoryId", "gym"] } };
const gymTask: ChangedEntity = { id: "t1", type: "task", record: { id: "t1", categoryId: "gym" } };
const workTask: ChangedEntity = { id: "t2", type: "task", record: { id: "t2", categoryId: "work" } };
const gymChecklist: ChangedEntity = { id: "c1", type: "checklist", record: { id: "c1", categoryId: "gym" } };

describe("indexRows and probes", () => {
  it("materializes one row per distinct token with '-' as the namespace of non-subtype tokens", () => {
    const sub: Subscription = { id: "s1", agentId: "a1", tokens: [tokens.entityId("t1"), TASK, tokens.subtype("workout.type", "run"), TASK] };
    expect(indexRows(sub)).toEqual([
      { tokenClass: "entityId", tokenNamespace: "-", tokenValue: "t1", tokenKey: "entityId|-|t1", subscriptionId: "s1", agentId: "a1" },
      { tokenClass: "semanticKey", tokenNamespace: "-", tokenValue: "TASK", tokenKey: "semanticKey|-|TASK", subscriptionId: "s1", agentId: "a1" },
      {
        tokenClass: "subtypeToken",
        tokenNamespace: "workout.type",
        tokenValue: "run",
        tokenKey: "subtypeToken|workout.type|run",
        subscriptionId: "s1",
        agentId: "a1",
      },
    ]);
    expect(indexProbes(batchOf([TASK, TASK])).map((p) => p.tokenKey)).toEqual(["semanticKey|-|TASK"]);
  });

  it("fetches only entityId token values", () => {
    const batch = batchOf([TASK, tokens.entityId("t2"), tokens.subtype("task", "t9"), tokens.entityId("t1"), tokens.semanticKey("t3")]);
    expect(entityIdsToFetch(batch)).toEqual(["t1", "t2"]);
  });
});

describe("matchBatch", () => {
  it("wakes the gym coach for a gym task and not for a work task (TASK + task.categoryId == gym)", () => {
    const hit = matchBatch(batchOf([TASK, tokens.entityId("t1")]), [candidate(gymCoach)], entities(gymTask), NOW);
    expect(hit.matches).toEqual([{ subscriptionId: "sub_gym", agentId: "coach", matchedTokenKeys: ["semanticKey|-|TASK"], matchedEntityIds: ["t1"] }]);
    const miss = matchBatch(batchOf([TASK, tokens.entityId("t2")]), [candidate(gymCoach)], entities(workTask), NOW);
    expect(miss).toEqual({ matches: [], skipped: [{ subscriptionId: "sub_gym", agentId: "coach", reason: "predicate_false" }] });
  });

  it("does not let a gym checklist in the same batch satisfy a task predicate", () => {
    const batch = batchOf([TASK, CHECKLIST, tokens.entityId("t2"), tokens.entityId("c1")]);
    expect(matchBatch(batch, [candidate(gymCoach)], entities(workTask, gymChecklist), NOW).matches).toEqual([]);
  });

  it("reports every entity that satisfied the predicate", () => {
    const other = { id: "t3", type: "task", record: { categoryId: "gym" } };
    const batch = batchOf([TASK, tokens.entityId("t3"), tokens.entityId("t1"), tokens.entityId("t2")]);
    expect(matchBatch(batch, [candidate(gymCoach)], entities(gymTask, workTask, other), NOW).matches[0]?.matchedEntityIds).toEqual(["t1", "t3"]);
  });

  it("fails a predicate closed when the changed entity was not fetched", () => {
    expect(matchBatch(batchOf([TASK, tokens.entityId("t1")]), [candidate(gymCoach)], entities(), NOW).skipped[0]?.reason).toBe("predicate_false");
  });

  it("matches any-of tokens without a predicate, across all three token classes", () => {
    const sub: Subscription = { id: "s", agentId: "a", tokens: [tokens.entityId("t9"), tokens.subtype("workout.type", "run")] };
    for (const token of [tokens.entityId("t9"), tokens.subtype("workout.type", "run")]) {
      expect(matchBatch(batchOf([token]), [candidate(sub)], entities(), NOW).matches).toEqual([
        { subscriptionId: "s", agentId: "a", matchedTokenKeys: [tokenKey(token)], matchedEntityIds: [] },
      ]);
    }
    expect(matchBatch(batchOf([tokens.subtype("workout.type", "swim")]), [candidate(sub)], entities(), NOW).skipped[0]?.reason).toBe("no_token_match");
  });

  it("skips agents whose lifecycle is not active", () => {
    const batch = batchOf([TASK, tokens.entityId("t1")]);
    for (const [lifecycle, reason] of [["dormant", "agent_dormant"], ["created", "agent_not_started"], ["destroyed", "agent_destroyed"]] as const) {
      expect(matchBatch(batch, [candidate(gymCoach, lifecycle)], entities(gymTask), NOW).skipped).toEqual([{ subscriptionId: "sub_gym", agentId: "coach", reason }]);
    }
  });

  it("honours the eligibility window: activeFrom inclusive, activeUntil exclusive", () => {
    const batch = batchOf([TASK]);
    const windowed = (eligibility: Subscription["eligibility"]) => candidate({ id: "s", agentId: "a", tokens: [TASK], eligibility });
    const reason = (sub: CandidateSubscription, now: number) => matchBatch(batch, [sub], entities(), now).skipped[0]?.reason ?? "match";
    const at = (iso: string) => Date.parse(iso);
    expect(reason(windowed({ activeFrom: "2025-03-01T12:00:00Z" }), NOW)).toBe("match");
    expect(reason(windowed({ activeFrom: "2025-03-01T12:00:00.001Z" }), NOW)).toBe("not_yet_active");
    expect(reason(windowed({ activeUntil: "2025-03-01T12:00:00Z" }), NOW)).toBe("expired");
    expect(reason(windowed({ activeUntil: "2025-03-01T12:00:00Z" }), at("2025-03-01T11:59:59.999Z"))).toBe("match");
    expect(reason(windowed({ activeFrom: "garbage" }), NOW)).toBe("invalid_eligibility");
  });

  it("evaluates a candidate reached through several tokens once, and orders output by subscription id", () => {
    const a: Subscription = { id: "b", agentId: "x", tokens: [TASK] };
    const b: Subscription = { id: "a", agentId: "y", tokens: [TASK] };
    const outcome = matchBatch(batchOf([TASK]), [candidate(a), candidate(b), candidate(a)], entities(), NOW);
    expect(outcome.matches.map((m) => m.subscriptionId)).toEqual(["a", "b"]);
  });
});

describe("token index model", () => {
  it("costs one posting lookup per distinct batch token, whatever the number of subscriptions", () => {
    const subs: Subscription[] = Array.from({ length: 10_000 }, (_, i) => ({ id: `s${i}`, agentId: `a${i}`, tokens: [tokens.entityId(`e${i}`)] }));
    subs.push({ id: "gym", agentId: "coach", tokens: [TASK] });
    const built = buildTokenIndex(subs.flatMap(indexRows));
    let lookups = 0;
    const counted: TokenIndex = {
      postings: { get: (key: string) => (lookups++, built.postings.get(key)) } as TokenIndex["postings"],
    };
    const ids = candidateSubscriptionIds(counted, batchOf([TASK, TASK, tokens.entityId("e7"), tokens.semanticKey("RATING")]));
    expect(ids).toEqual(["gym", "s7"]);
    expect(lookups).toBe(3);
  });

  const tokenArb = fc.oneof(
    fc.constantFrom("TASK", "CHECKLIST", "RATING").map((v) => tokens.semanticKey(v)),
    fc.constantFrom("t1", "t2", "c1").map((v) => tokens.entityId(v)),
    fc.constantFrom("run", "swim").map((v) => tokens.subtype("workout.type", v)),
  );
  const subsArb = fc.uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 4 }),
      agentId: fc.constantFrom("a1", "a2", "a3"),
      tokens: fc.array(tokenArb, { minLength: 1, maxLength: 3 }),
      predicate: fc.option(fc.constantFrom({ eq: ["task.categoryId", "gym"] as [string, string] }, { exists: "checklist" }), { nil: undefined }),
      agentLifecycle: fc.constantFrom<Lifecycle>("active", "active", "dormant"),
    }),
    { selector: (s) => s.id, maxLength: 12 },
  );

  it("prefilters soundly and completely: matching index candidates equals matching every subscription", () => {
    fc.assert(
      fc.property(subsArb, fc.array(tokenArb, { maxLength: 5 }), (subs, typed) => {
        const batch = batchOf(typed);
        const index = buildTokenIndex(subs.flatMap(indexRows));
        const candidateIds = new Set(candidateSubscriptionIds(index, batch));
        const batchKeys = new Set(batch.typedTokens.map(tokenKey));
        expect([...candidateIds].sort()).toEqual(subs.filter((s) => s.tokens.some((t) => batchKeys.has(tokenKey(t)))).map((s) => s.id).sort());
        const fetched = entities(gymTask, gymChecklist);
        const viaIndex = matchBatch(batch, subs.filter((s) => candidateIds.has(s.id)), fetched, NOW).matches;
        expect(matchBatch(batch, subs, fetched, NOW).matches).toEqual(viaIndex);
        expect(matchBatch(batch, [...subs].reverse(), fetched, NOW)).toEqual(matchBatch(batch, subs, fetched, NOW));
      }),
    );
  });
});

describe("subscriptionSpecSchema", () => {
  it("accepts the gym coach subscription and rejects bad ones with named fields", () => {
    const spec = { tokens: [TASK], predicate: { eq: ["task.categoryId", "gym"] }, eligibility: { activeFrom: "2025-01-01T00:00:00Z" } };
    expect(subscriptionSpecSchema.safeParse(spec).success).toBe(true);
    const messages = (input: unknown) => subscriptionSpecSchema.safeParse(input).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
    expect(messages({ tokens: [] })).toEqual(["tokens: tokens must list at least one token"]);
    expect(messages({ tokens: [TASK], predicate: { gt: 1 } })[0]).toContain("predicate: must be an object with exactly one of");
    expect(messages({ tokens: [TASK], predicate: { or: [{ exists: "task.id" }, { eq: ["task.x", null] }] } })).toEqual([
      "predicate.or.1.eq: value must be a string, number or boolean",
    ]);
    expect(messages({ tokens: [TASK], eligibility: { activeFrom: "2025-02-01T00:00:00Z", activeUntil: "2025-01-01T00:00:00Z" } })).toEqual([
      "eligibility.activeUntil: activeUntil must be later than activeFrom",
    ]);
    expect(messages({ tokens: [TASK], eligibility: { activeFrom: "tomorrow" } })).toEqual(["eligibility.activeFrom: activeFrom must be an ISO-8601 UTC timestamp"]);
  });

  it("converts to JSON Schema for the OpenAPI document", () => {
    const schema = JSON.stringify(z.toJSONSchema(subscriptionSpecSchema, { io: "input" }));
    expect(schema).toContain('"tokenNamespace"');
    expect(schema).toContain('"activeUntil"');
  });
});

describe("from change to wake", () => {
  it("turns a gym task write into one wake whose runKey is H(agentId, subscriptionId, logicalChangeKey)", () => {
    const batch = batchOf([TASK, tokens.entityId("t1")], 77);
    const index = buildTokenIndex(indexRows(gymCoach));
    const ids = candidateSubscriptionIds(index, batch);
    const { matches } = matchBatch(batch, [gymCoach].filter((s) => ids.includes(s.id)).map((s) => candidate(s)), entities(gymTask), NOW);
    const wakes = matches.map((m) => subscriptionWake(batch, m));
    const expected = createHash("sha256").update(`v1|coach|sub_gym|${batch.logicalChangeKey}`).digest("hex");
    expect(wakes).toMatchObject([{ ok: true, wake: { runKey: expected, reason: "subscription", agentId: "coach" } }]);
  });
});
