import { describe, expect, it } from "vitest";
import { meterStatements, statementsRun } from "../../src/objects/shared/seams/statement-meter";
import { agentDo, createAgent, createTenant, inDo } from "./helpers";

/**
 * Every run's "maybe compact" pumps the agent's compaction jobs, and almost always none is open: the job store keeps
 * "none open" from its last read until a job can have opened (issue 12 §8, "Streaming turn (session 13)").
 */
describe("compaction's open jobs", () => {
  it("are not read while none is open (the activation's read said so), and again after the planner inserts one or a failed one is requeued", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const { compaction, history } = instance.parts;
      const sql = state.storage.sql as never;
      meterStatements(sql);
      const pumped = async () => {
        const before = statementsRun(sql)!;
        const outcome = await compaction.pump();
        return { committed: outcome.committed as number, statements: statementsRun(sql)! - before };
      };
      // The activation's one read found none open (session 15): not even the first pump reads them.
      expect(await pumped()).toEqual({ committed: 0, statements: 0 });
      expect(await pumped()).toEqual({ committed: 0, statements: 0 });

      // A job the planner inserts is seen and worked off.
      const thread = "t-long";
      for (let i = 0; i < 120; i++) history.append({ id: `${thread}-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `message ${i} about the plan` });
      expect(compaction.plan(thread)).toBe(1);
      expect((await pumped()).committed).toBeGreaterThanOrEqual(1);
      const open = () => state.storage.sql.exec("SELECT count(*) AS n FROM compaction_jobs WHERE status IN ('pending', 'running')").one().n;
      expect(open()).toBe(0);
      expect(await pumped()).toEqual({ committed: 0, statements: 0 });

      // A job that failed for good (set here as a summarizer would leave it) and is requeued through the store is seen.
      state.storage.sql.exec("UPDATE compaction_jobs SET status = 'failed_terminal', summary_message_id = NULL WHERE rowid = (SELECT min(rowid) FROM compaction_jobs)");
      expect(compaction.requeueFailed()).toBe(1);
      expect(open()).toBe(1);
      const after = await pumped();
      expect(after.statements).toBeGreaterThan(0);
      expect(open()).toBe(0);
    });
  });
});
