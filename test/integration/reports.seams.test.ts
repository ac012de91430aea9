import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_REPORT_MAX_AGE_MS } from "../../src/core/memory/reports";
import type { Result } from "../../src/core/runtime/result";
import type { ReportHeadView } from "../../src/schema/agents/reports";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

async function setup() {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, {
    kind: "coach",
    model: "builtin:playbook",
    playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "ok" }] },
  });
  return { tenantId, key, agent };
}

/** One operator turn made of `/tool publish_report` lines; resolves when its run is terminal. */
async function publish(key: string, agentId: string, ...drafts: Array<Record<string, unknown>>) {
  const text = drafts.map((draft) => `/tool publish_report ${JSON.stringify(draft)}`).join("\n");
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status).toBe(202);
  const run = await waitForRun(key, agentId, sent.body.runKey);
  expect(run.status).toBe("completed");
  const results = (await api("GET", `/v1/agents/${agentId}/messages?limit=100`, { key })).body.data
    .filter((m: any) => m.kind === "toolResult" && m.metadata.runKey === sent.body.runKey)
    .map((m: any) => m.content);
  return { runKey: sent.body.runKey as string, results };
}

const head = (key: string, agentId: string, scope = "current") => api("GET", `/v1/agents/${agentId}/reports/${scope}`, { key });

describe("reports", () => {
  it("goes stale past the scope's max age, and when the agent processes a newer wake", async () => {
    const { tenantId, key, agent } = await setup();
    await publish(key, agent.id, { scope: "current", content: { text: "now" } });
    const stub = agentDo(tenantId, agent.id);
    const fresh = (await head(key, agent.id)).body;
    const updatedAt = Date.parse(fresh.headUpdatedAt);

    const freshnessAt = async (nowMs: number) => {
      const result = (await stub.getReportHead("current", nowMs)) as Result<{ report: ReportHeadView }>;
      if (!result.ok) throw new Error(result.message);
      return result.report.freshness;
    };
    expect(await freshnessAt(updatedAt + DEFAULT_REPORT_MAX_AGE_MS.current)).toEqual({ fresh: true, reasons: [], ageMs: DEFAULT_REPORT_MAX_AGE_MS.current });
    expect(await freshnessAt(updatedAt + DEFAULT_REPORT_MAX_AGE_MS.current + 1)).toEqual({
      fresh: false,
      reasons: [{ code: "max_age_exceeded", ageMs: DEFAULT_REPORT_MAX_AGE_MS.current + 1, maxAgeMs: DEFAULT_REPORT_MAX_AGE_MS.current }],
      ageMs: DEFAULT_REPORT_MAX_AGE_MS.current + 1,
    });

    // A later wake (any processed input) moves the processed cursor past the report's source cursor.
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "anything new?" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const stale = (await head(key, agent.id)).body;
    expect(stale.id).toBe(fresh.id);
    expect(stale.freshness.fresh).toBe(false);
    expect(stale.freshness.reasons).toEqual([{ code: "source_cursor_behind", sources: ["wakes"] }]);

    // Both reasons at once past the max age.
    expect((await freshnessAt(updatedAt + DEFAULT_REPORT_MAX_AGE_MS.current + 1)).reasons.map((r) => r.code)).toEqual(["max_age_exceeded", "source_cursor_behind"]);

    // Publishing again (same content, newer sources) is a new report built from the newer cursor: fresh again.
    const again = await publish(key, agent.id, { scope: "current", content: { text: "now" } });
    expect(again.results[0].output.reportId).not.toBe(fresh.id);
    const refreshed = (await head(key, agent.id)).body;
    expect(refreshed.freshness).toMatchObject({ fresh: true, reasons: [] });
    expect(refreshed.sourceCursor.wakes).toBeGreaterThan(fresh.sourceCursor.wakes);
  });
});
