import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
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
const list = (key: string, agentId: string, query = "") => api("GET", `/v1/agents/${agentId}/reports${query}`, { key });

describe("reports", () => {
  it("publish_report writes an immutable report; the head serves it fresh", async () => {
    const { tenantId, key, agent } = await setup();
    const { runKey, results } = await publish(key, agent.id, { scope: "current", content: { text: "All on track." }, confidence: 0.8 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ ok: true, toolName: "publish_report", output: { scope: "current", created: true } });
    const reportId = results[0].output.reportId as string;
    expect(results[0].links).toEqual([{ relation: "tool_effect", target: { type: "report", id: reportId }, effect: "created" }]);

    const got = await head(key, agent.id);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: reportId,
      agentId: agent.id,
      scope: "current",
      periodKey: "",
      content: { text: "All on track." },
      confidence: 0.8,
      provenance: { runKey },
      freshness: { fresh: true, reasons: [] },
    });
    expect(got.body.sourceCursor.wakes).toBeGreaterThan(0);
    expect(got.body.freshness.ageMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(got.body.createdAt)).not.toBeNaN();
    expect(Date.parse(got.body.headUpdatedAt)).not.toBeNaN();

    const events = (await agentDo(tenantId, agent.id).listEvents(0, 1000)) as Array<{ type: string; data: any }>;
    expect(events.filter((e) => e.type === "report.published").map((e) => e.data)).toEqual([{ scope: "current", reportId, action: "create" }]);
  });

  it("a new publish moves the head; the old report stays immutable and listed, newest first", async () => {
    const { key, agent } = await setup();
    const first = await publish(key, agent.id, { scope: "current", content: { text: "v1" } });
    const firstId = first.results[0].output.reportId;
    const firstBody = (await list(key, agent.id)).body.data[0];
    const second = await publish(key, agent.id, { scope: "current", content: { text: "v2" } });
    const secondId = second.results[0].output.reportId;
    expect(secondId).not.toBe(firstId);
    expect(second.results[0].output.created).toBe(true);

    expect((await head(key, agent.id)).body).toMatchObject({ id: secondId, content: { text: "v2" }, freshness: { fresh: true } });
    const all = await list(key, agent.id);
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: any) => r.id)).toEqual([secondId, firstId]);
    expect(all.body.data[1]).toEqual(firstBody);
    expect(all.body.nextCursor).toBeNull();

    const page1 = await list(key, agent.id, "?limit=1");
    expect(page1.body.data.map((r: any) => r.id)).toEqual([secondId]);
    const page2 = await list(key, agent.id, `?limit=1&cursor=${page1.body.nextCursor}`);
    expect(page2.body.data.map((r: any) => r.id)).toEqual([firstId]);
    expect(page2.body.nextCursor).toBeNull();

    // Scopes have independent heads; the list can be narrowed to one scope.
    const daily = await publish(key, agent.id, { scope: "daily", periodKey: "2026-05-01", content: { text: "day" } });
    expect((await head(key, agent.id, "daily")).body).toMatchObject({ id: daily.results[0].output.reportId, periodKey: "2026-05-01" });
    expect((await head(key, agent.id)).body.id).toBe(secondId);
    expect((await list(key, agent.id, "?scope=daily")).body.data.map((r: any) => r.id)).toEqual([daily.results[0].output.reportId]);
  });

  it("the same content twice in one run is one report; a replayed publish re-confirms the head", async () => {
    const { tenantId, key, agent } = await setup();
    const draft = { scope: "current", content: { text: "same" } };
    const { results } = await publish(key, agent.id, draft, draft);
    const reportId = results[0].output.reportId;
    expect((await list(key, agent.id)).body.data.map((r: any) => r.id)).toEqual([reportId]);

    // A replay (same content, same processed cursor) through the part itself: confirm, no new row.
    const replay = await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const reports = instance.parts.reports;
      const before = reports.head("current")!;
      const outcome = reports.publish({ ...draft, provenance: before.report!.provenance, sourceCursor: before.report!.sourceCursor }, before.head.updatedAt + 5_000);
      return { before: before.head.updatedAt, outcome };
    });
    expect(replay.outcome).toMatchObject({ ok: true, action: "confirm", created: false, report: { id: reportId } });
    if (replay.outcome.ok) expect(replay.outcome.head.updatedAt).toBe(replay.before + 5_000);
    const rows = await list(key, agent.id);
    expect(rows.body.data).toHaveLength(1);
    expect((await head(key, agent.id)).body.headUpdatedAt).toBe(new Date(replay.before + 5_000).toISOString());
  });

  it("404 for a scope never published, an unknown agent and another tenant's agent; 400 for a bad scope", async () => {
    const { key, agent } = await setup();
    await publish(key, agent.id, { scope: "current", content: { text: "mine" } });
    expect((await head(key, agent.id, "weekly")).status).toBe(404);
    expect((await head(key, "no-such-agent")).status).toBe(404);
    expect((await list(key, "no-such-agent")).status).toBe(404);

    const other = await createTenant("other");
    expect((await head(other.key, agent.id)).status).toBe(404);
    expect((await list(other.key, agent.id)).status).toBe(404);

    const bad = await head(key, agent.id, "yearly");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect((await list(key, agent.id, "?scope=yearly")).status).toBe(400);
    expect((await list(key, agent.id, "?cursor=not-a-cursor")).status).toBe(400);
  });

  it("widget tokens read only their own agents' reports", async () => {
    const { key, agent } = await setup();
    const otherAgent = await createAgent(key);
    await publish(key, agent.id, { scope: "current", content: { text: "widget" } });
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "user-1", agents: [agent.id], ttlSeconds: 600 } });
    const token = minted.body.token as string;
    expect((await head(token, agent.id)).status).toBe(200);
    expect((await list(token, agent.id)).body.data).toHaveLength(1);
    expect((await head(token, otherAgent.id)).status).toBe(404);
    expect((await list(token, otherAgent.id)).status).toBe(404);
  });

  it("an invalid publish_report call is refused without writing a report", async () => {
    const { key, agent } = await setup();
    const { results } = await publish(key, agent.id, { scope: "yearly", content: { text: "x" } }, { scope: "daily", periodKey: "May", content: {} });
    expect(results.map((r: any) => r.code)).toEqual(["invalid_arguments", "invalid_arguments"]);
    expect((await list(key, agent.id)).body.data).toEqual([]);
  });
});
