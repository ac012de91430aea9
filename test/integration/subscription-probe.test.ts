import { env, runInDurableObject } from "cloudflare:test";
import { and, eq, isNull, ne, or, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { indexProbes, type IndexProbe } from "../../src/core/wakes/subscription-index";
import { SemanticKeys, tokens } from "../../src/core/wakes/tokens";
import * as schema from "../../src/db/tenant-schema";
import { agentTokens } from "../../src/objects/tenant/directory/agent-activity";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import type { TenantDb } from "../../src/objects/tenant/types";
import { createAgent, createTenant } from "./helpers";

/**
 * Every run report asks `SubscriptionStore.anyOtherSubscriber` whether another agent follows
 * the run's tokens. It is one statement built once (the probes as one JSON parameter); these cases pin that it answers
 * as the per-call OR query it replaced, and that each probe stays a primary-key prefix lookup of subscription_tokens.
 */

/** The query as sessions 8–10 built it per call: an OR of the probes, same joins. The reference the new one must match. */
function orQuery(db: TenantDb, probes: readonly IndexProbe[], agentId: string): boolean {
  const t = schema.subscriptionTokens;
  const s = schema.subscriptions;
  const a = schema.agentDirectory;
  const row = db
    .select({ one: sql<number>`1` })
    .from(t)
    .innerJoin(s, and(eq(s.id, t.subscriptionId), isNull(s.deletedAt)))
    .innerJoin(a, eq(a.id, s.agentId))
    .where(and(ne(s.agentId, agentId), or(...probes.map((probe) => and(eq(t.tokenClass, probe.tokenClass), eq(t.tokenNamespace, probe.tokenNamespace), eq(t.tokenValue, probe.tokenValue))))))
    .limit(1)
    .get();
  return row !== undefined;
}

/** Records every statement the object's storage runs until `restore`. */
function recordStatements(state: DurableObjectState): { seen: Array<{ query: string; args: unknown[] }>; restore(): void } {
  const sqlStorage = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => unknown };
  const original = sqlStorage.exec;
  const seen: Array<{ query: string; args: unknown[] }> = [];
  sqlStorage.exec = (query: string, ...args: unknown[]) => {
    seen.push({ query, args });
    return original.call(state.storage.sql, query, ...args);
  };
  return { seen, restore: () => (sqlStorage.exec = original) };
}

const runProbes = (agent: { id: string }, messages: boolean) =>
  indexProbes({ typedTokens: agentTokens({ id: agent.id, kind: "coach", lifecycle: "active" }, [SemanticKeys.agentStateChangedNotification, ...(messages ? [SemanticKeys.agentMessageAppendedNotification] : [])]) });

describe("anyOtherSubscriber", () => {
  it("answers as the per-call OR query: none, another agent's live subscription on one probe only, tombstoned, the agent's own, an agent not in the directory", async () => {
    const { tenantId, key } = await createTenant("subscription-probe");
    const reporter = await createAgent(key, { displayName: "Reporter" });
    const follower = await createAgent(key, { displayName: "Follower" });
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
    await runInDurableObject(stub, (instance: TenantDO) => {
      const store = instance.parts.subscriptions;
      const db = instance.parts.db;
      const answers = (label: string) =>
        [false, true].map((messages) => {
          const probes = runProbes(reporter, messages);
          const fixed = store.anyOtherSubscriber(probes, reporter.id);
          expect(fixed, `${label} (messages: ${messages})`).toBe(orQuery(db, probes, reporter.id));
          return fixed;
        });

      expect(answers("no subscription")).toEqual([false, false]);
      expect(store.anyOtherSubscriber([], reporter.id)).toBe(false);

      // The reporter's own subscription on every one of its probes: never counts.
      store.create(reporter.id, { tokens: [tokens.entityId(reporter.id), tokens.semanticKey(SemanticKeys.agentMessageAppendedNotification)] });
      expect(answers("the agent's own")).toEqual([false, false]);

      // Another agent's subscription on a token no probe carries.
      store.create(follower.id, { tokens: [tokens.entityId("ag_someone_else")] });
      expect(answers("another agent, other token")).toEqual([false, false]);

      // Another agent's live subscription on one probe only (the message key, probed only when the run appended messages).
      const onMessages = store.create(follower.id, { tokens: [tokens.semanticKey(SemanticKeys.agentMessageAppendedNotification)] });
      expect(answers("another agent, one probe")).toEqual([false, true]);

      // Tombstoned: its index rows are gone, and the join would skip its row anyway.
      expect(store.remove(follower.id, onMessages.id)).not.toBeNull();
      expect(answers("tombstoned")).toEqual([false, false]);

      // A subscription whose agent is missing from the directory cannot be woken: not counted.
      store.create("ag_not_in_directory", { tokens: [tokens.entityId(reporter.id)] });
      expect(answers("agent not in the directory")).toEqual([false, false]);

      // Another agent's subscription on the reporter's id (a probe of every run), beside the others.
      store.create(follower.id, { tokens: [tokens.entityId(reporter.id)] });
      expect(answers("another agent, the reporter's id")).toEqual([true, true]);
      // The follower's own run: its subscriptions are its own, and the reporter's (on the message key) is the other one.
      expect(store.anyOtherSubscriber(runProbes(follower, false), follower.id)).toBe(false);
      expect(store.anyOtherSubscriber(runProbes(follower, true), follower.id)).toBe(true);
      expect(orQuery(db, runProbes(follower, true), follower.id)).toBe(true);
    });
  });

  it("each probe is a primary-key prefix lookup of subscription_tokens (EXPLAIN QUERY PLAN of the statement it runs)", async () => {
    const { tenantId, key } = await createTenant("subscription-probe-plan");
    const reporter = await createAgent(key);
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
    const plan = await runInDurableObject(stub, (instance: TenantDO, state) => {
      const { seen, restore } = recordStatements(state);
      // The agent's own subscription on its id: a held token, so the probe is asked of SQLite.
      instance.parts.subscriptions.create(reporter.id, { tokens: [tokens.entityId(reporter.id)] });
      try {
        expect(instance.parts.subscriptions.anyOtherSubscriber(runProbes(reporter, true), reporter.id)).toBe(false);
      } finally {
        restore();
      }
      const probes = seen.filter((statement) => statement.query.includes("json_each"));
      expect(probes).toHaveLength(1);
      const { query, args } = probes[0]!;
      return state.storage.sql.exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, ...(args as SqlStorageValue[])).toArray().map((row) => row.detail);
    });
    // json_each drives the loop; every probe looks subscription_tokens up by its key prefix, then the joins by primary key.
    expect(plan[0], plan.join("\n")).toMatch(/^SCAN probe VIRTUAL TABLE/);
    expect(plan.filter((line) => /subscription_tokens|\bt\b/.test(line) && !/SEARCH t USING COVERING INDEX sqlite_autoindex_subscription_tokens_1 \(token_class=\? AND token_namespace=\? AND token_value=\?\)/.test(line)), plan.join("\n")).toEqual([]);
    expect(plan.some((line) => /SEARCH t USING COVERING INDEX sqlite_autoindex_subscription_tokens_1 \(token_class=\? AND token_namespace=\? AND token_value=\?\)/.test(line)), plan.join("\n")).toBe(true);
    expect(plan.some((line) => /^SCAN (t|s|a)\b/.test(line)), plan.join("\n")).toBe(false);
  });

  it("asks no statement when no probe's token is in the index, and every probe once the index is too large to keep its tokens", async () => {
    const { tenantId, key } = await createTenant("subscription-probe-held");
    const reporter = await createAgent(key, { displayName: "Reporter" });
    const follower = await createAgent(key, { displayName: "Follower" });
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
    await runInDurableObject(stub, (instance: TenantDO, state) => {
      const { seen, restore } = recordStatements(state);
      const probes = () => seen.filter((statement) => statement.query.includes("json_each")).length;
      const Store = instance.parts.subscriptions.constructor as new (db: TenantDb) => TenantDO["parts"]["subscriptions"];
      try {
        // A follower of a journal token only: nothing the reporter's run carries is held.
        const store = new Store(instance.parts.db);
        store.create(follower.id, { tokens: [tokens.entityId("jr_some_task")] });
        expect(store.anyOtherSubscriber(runProbes(reporter, true), reporter.id)).toBe(false);
        expect(probes()).toBe(0);

        // 20 000 index rows (of no live subscription) that sort before every real token, then a follower of the
        // reporter's id: a store started now cannot keep the tokens, so it asks, and finds the follower.
        state.storage.sql.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
          INSERT INTO subscription_tokens (token_class, token_namespace, token_value, subscription_id, agent_id) SELECT '!filler', '-', printf('%05d', i), 'sub_filler', 'ag_filler' FROM n`);
        store.create(follower.id, { tokens: [tokens.entityId(reporter.id)] });
        const restarted = new Store(instance.parts.db);
        expect(restarted.anyOtherSubscriber(runProbes(reporter, true), reporter.id)).toBe(true);
        expect(probes()).toBe(1);
      } finally {
        restore();
      }
    });
  });
});
