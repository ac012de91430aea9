import { env, runInDurableObject } from "cloudflare:test";
import { asc, eq, gt, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/agent-schema";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import type { AgentDb } from "../../src/objects/agent/types";
import { checkStatementSites, leanSite, preparedSite, rawSite, StatementSiteMismatch } from "../../src/objects/shared/statements/statement-sites";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

/** Two agents with two finished runs each (messages with json columns, runs, events). */
async function twoAgents() {
  const { tenantId, key } = await createTenant();
  const agents = [];
  for (let i = 0; i < 2; i++) {
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    for (const text of ["first", "second"]) {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      expect(sent.status).toBe(202);
      await waitForRun(key, agent.id, sent.body.runKey);
    }
    agents.push(agentDo(tenantId, agent.id));
  }
  return agents;
}

describe("statements built once per isolate (issue 12 §7, session 11)", () => {
  it("a site builds through drizzle once; every object's bound statement returns what its own drizzle build returns, on its own rows", async () => {
    const [a, b] = await twoAgents();
    let builds = 0;
    const m = schema.messages;
    const page = (db: AgentDb) => db.select().from(m).where(gt(m.seq, sql.placeholder("after"))).orderBy(asc(m.seq)).limit(sql.placeholder("limit")).prepare();
    const PAGE = leanSite("test.sites.page", (db: AgentDb) => {
      builds++;
      return page(db);
    });
    const stamp = (db: AgentDb) => db.update(m).set({ metadata: sql.placeholder("metadata") as never }).where(eq(m.id, sql.placeholder("id"))).returning({ id: m.id, metadata: m.metadata, content: m.content, seq: m.seq }).prepare();
    const STAMP = preparedSite("test.sites.stamp", (db: AgentDb) => {
      builds++;
      return stamp(db);
    });
    const COUNT = rawSite<{ n: number }>("test.sites.count", () => {
      builds++;
      return sql`SELECT count(*) AS n FROM ${m} WHERE ${m.kind} = ${sql.placeholder("kind")}`;
    });
    const seen: string[] = [];
    checkStatementSites(false);
    try {
      for (const stub of [a!, b!]) {
        await runInDurableObject(stub, (instance: AgentDO) => {
          const db = instance.parts.db;
          const expected = page(db).all({ after: 0, limit: 10 });
          expect(expected.length).toBeGreaterThan(0);
          expect(PAGE.bind(db).all({ after: 0, limit: 10 })).toEqual(expected);
          seen.push(expected[0]!.id);
          expect(PAGE.bind(db).get({ after: expected[0]!.seq, limit: 10 })).toEqual(expected[1]);
          expect(() => PAGE.bind(db).all({ after: 0 })).toThrow(/placeholder "limit"/);
          // A returning update through drizzle's own prepared class: json encoded on the way in, decoded on the way out.
          const target = expected[0]!;
          const values = { id: target.id, metadata: JSON.stringify({ stamped: target.id }) };
          const viaDrizzle = stamp(db).get(values);
          expect(viaDrizzle).toMatchObject({ id: target.id, seq: target.seq });
          expect(STAMP.bind(db).get(values)).toEqual(viaDrizzle);
          expect(STAMP.bind(db).all(values)).toEqual(stamp(db).all(values));
          expect(STAMP.bind(db).all({ id: "no-such-message", metadata: "{}" })).toEqual([]);
          expect(COUNT.bind(db).get({ kind: "user" })).toEqual({ n: 2 });
        });
      }
      // The second object bound the kept plans without building.
      expect(builds).toBe(3);
      // Each object's statements ran on its own rows.
      expect(new Set(seen).size).toBe(2);
    } finally {
      checkStatementSites(true);
    }
  });

  it("a site whose build differs from its kept plan fails in test deployments: a key shared by two statements cannot go unnoticed", async () => {
    const [a, b] = await twoAgents();
    const m = schema.messages;
    // One name, a build that depends on something other than the schema (here: which object builds first).
    let column: typeof m.text | typeof m.kind = m.text;
    const SHARED = leanSite("test.sites.shared", (db: AgentDb) => db.select({ value: column }).from(m).prepare());
    const RAW = rawSite("test.sites.sharedRaw", () => sql`SELECT ${column} AS value FROM ${m}`);
    expect(() => leanSite("test.sites.shared", (db: AgentDb) => db.select().from(m).prepare())).toThrow(/declared twice/);
    await runInDurableObject(a!, (instance: AgentDO) => {
      SHARED.bind(instance.parts.db);
      RAW.bind(instance.parts.db);
    });
    column = m.kind;
    await runInDurableObject(b!, (instance: AgentDO) => {
      expect(() => SHARED.bind(instance.parts.db)).toThrow(StatementSiteMismatch);
      expect(() => RAW.bind(instance.parts.db)).toThrow(StatementSiteMismatch);
    });
    column = m.text;
    await runInDurableObject(b!, (instance: AgentDO) => {
      expect(SHARED.bind(instance.parts.db).all().length).toBeGreaterThan(0);
    });
  });
});
