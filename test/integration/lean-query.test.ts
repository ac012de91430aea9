import { env, runInDurableObject } from "cloudflare:test";
import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/agent-schema";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { lean, rawStatement } from "../../src/objects/shared/statements/lean-query";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

describe("lean prepared reads (issue 12 §8)", () => {
  it("return exactly what drizzle's prepared query returns: json columns, nested selections, inner joins, placeholders, a missing row", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    for (const text of ["first", "second"]) {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      expect(sent.status).toBe(202);
      await waitForRun(key, agent.id, sent.body.runKey);
    }
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const db = instance.parts.db;
      const m = schema.messages;
      const r = schema.runs;
      const queries = [
        // Whole rows with json columns (metadata, content), ordered and limited by placeholders.
        [db.select().from(m).where(gt(m.seq, sql.placeholder("after"))).orderBy(desc(m.seq)).limit(sql.placeholder("limit")).prepare(), { after: 0, limit: 10 }],
        // A nested selection over an inner join (the shape of the inbox's and the summaries' reads). User messages:
        // a reply stores its run key as '' (same run as the message before it, message-row.ts), so it joins no run.
        [db.select({ run: r, text: m.text }).from(m).innerJoin(r, eq(r.runKey, m.runKey)).where(and(eq(m.kind, sql.placeholder("kind")))).orderBy(asc(m.seq)).prepare(), { kind: "user" }],
        // An aggregate through an SQL expression with a decoder.
        [db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(m).prepare(), {}],
      ] as const;
      for (const [prepared, values] of queries) {
        const expected = (prepared as any).all(values);
        expect(expected.length).toBeGreaterThan(0);
        expect(lean(prepared as any).all(values)).toEqual(expected);
        expect(lean(prepared as any).get(values)).toEqual(expected[0]);
      }
      const byId = db.select().from(m).where(eq(m.id, sql.placeholder("id"))).prepare();
      expect(lean(byId).get({ id: "no-such-message" })).toBeUndefined();
      expect(() => lean(byId).get({})).toThrow(/placeholder "id"/);
      const raw = rawStatement<{ n: number }>(db, sql`SELECT count(*) AS n FROM ${m} WHERE ${m.kind} = ${sql.placeholder("kind")}`);
      expect(raw.get({ kind: "user" })).toEqual({ n: 2 });
    });
  });
});
