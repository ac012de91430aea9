import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { api, createAgent, createTenant, eventually, waitForRun, freshInstance } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const at = (iso: string) => Date.parse(iso);

async function setup(agentBody: Record<string, unknown> = {}) {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, agentBody);
  return { tenantId, key, agent, stub: agentDo(tenantId, agent.id) };
}

async function createTimer(key: string, agentId: string, body: Record<string, unknown>): Promise<any> {
  const res = await api("POST", `/v1/agents/${agentId}/timers`, { key, body });
  if (res.status !== 201) throw new Error(`timer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function getTimer(key: string, agentId: string, timerId: string, include = ""): Promise<any> {
  const res = await api("GET", `/v1/agents/${agentId}/timers${include ? `?include=${include}` : ""}`, { key });
  return res.body.data.find((timer: any) => timer.id === timerId);
}

async function runsOf(key: string, agentId: string): Promise<any[]> {
  return (await api("GET", `/v1/agents/${agentId}/runs?limit=200`, { key })).body.data;
}

/** The Agents SDK schedule rows the timers keep (callback onTimerAlarm), and the DO's alarm. */
async function timerSchedules(stub: ReturnType<typeof agentDo>): Promise<{ times: number[]; alarm: number | null }> {
  return runInDurableObject(stub, async (instance, state) => ({
    times: instance.getSchedules().filter((row) => row.callback === "onTimerAlarm").map((row) => row.time * 1000),
    alarm: await state.storage.getAlarm(),
  }));
}

const ceilSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;

describe("timers", () => {
  it("an interval timer fires once per slot through the real alarm, which re-arms at the earliest due timer", async () => {
    const { key, agent, stub } = await setup();
    // Created 60.5 s "ago": its first slot is already half a second overdue.
    await stub.setTimerClock(Date.now() - 60_500);
    const pulse = await createTimer(key, agent.id, { name: "pulse", spec: { kind: "interval", everySeconds: 60 } });
    const hourly = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 3600 } });
    await stub.setTimerClock(null);
    const slot = at(pulse.nextRunAt);
    expect((await timerSchedules(stub)).times).toHaveLength(1);

    await runDurableObjectAlarm(stub); // the runtime may already have run it: either way the slot fires once
    const runKey = runKeys.timer(agent.id, pulse.id, pulse.nextRunAt);
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ reason: "timer", status: "completed" });

    const after = await getTimer(key, agent.id, pulse.id);
    expect(at(after.nextRunAt)).toBe(slot + 60_000);
    expect(after.recentDecisions).toMatchObject([{ action: "fire", runKey, runStatus: "completed", decision: { scheduledAt: pulse.nextRunAt, enqueue: "accepted" } }]);
    const armed = await timerSchedules(stub);
    expect(armed.times).toEqual([ceilSecond(Math.min(slot + 60_000, at(hourly.nextRunAt)))]);
    expect(armed.alarm).not.toBeNull();
    expect(armed.alarm!).toBeLessThanOrEqual(armed.times[0]!);

    // The next slot is a minute away: running the alarm now fires nothing more.
    await runDurableObjectAlarm(stub);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await runsOf(key, agent.id)).filter((run) => run.reason === "timer")).toHaveLength(1);
    expect((await timerSchedules(stub)).times).toHaveLength(1);
  });

  it("catches up slots missed while the object slept when it next activates", async () => {
    const { key, agent, stub } = await setup();
    // This instance keeps a frozen clock (and so arms no alarm); its slot is already overdue in real time.
    await stub.setTimerClock(Date.now() - 60_500);
    const timer = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 60 } });
    expect((await timerSchedules(stub)).times).toEqual([]);
    // A fresh instance on the same storage stands in for the next activation after an eviction.
    await runInDurableObject(stub, async (instance, state) => {
      freshInstance(instance, state);
      await eventually(async () => (await state.storage.sql.exec("SELECT count(*) AS n FROM scheduler_decisions").one()).n === 1);
    });
    const runKey = runKeys.timer(agent.id, timer.id, timer.nextRunAt);
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ reason: "timer", status: "completed" });
    expect((await timerSchedules(stub)).times).toEqual([ceilSecond(at(timer.nextRunAt) + 60_000)]);
  });

  it("keeps a single alarm schedule at the earliest nextRunAt as timers come and go", async () => {
    const { key, agent, stub } = await setup();
    const slow = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 7200 } });
    expect((await timerSchedules(stub)).times).toEqual([ceilSecond(at(slow.nextRunAt))]);
    const fast = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 600 } });
    expect((await timerSchedules(stub)).times).toEqual([ceilSecond(at(fast.nextRunAt))]);
    expect((await api("DELETE", `/v1/agents/${agent.id}/timers/${fast.id}`, { key })).status).toBe(200);
    expect((await timerSchedules(stub)).times).toEqual([ceilSecond(at(slow.nextRunAt))]);
    expect((await api("DELETE", `/v1/agents/${agent.id}/timers/${slow.id}`, { key })).status).toBe(200);
    expect((await timerSchedules(stub)).times).toEqual([]);
  });

  it("downtime across three cron slots yields exactly one recoveryCatchup wake", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { name: "hourly", spec: { kind: "cron", expr: "0 * * * *", timeZone: "UTC" } });
    expect(timer.nextRunAt).toBe("2026-06-01T01:00:00.000Z");

    const tick = await stub.tickTimers(at("2026-06-01T03:30:00Z"));
    const runKey = runKeys.recoveryCatchup(agent.id, timer.id, "2026-06-01T03:00:00.000Z");
    expect(tick).toMatchObject({ ok: true, decisions: [{ timerId: timer.id, action: "catchup", runKey, enqueue: "accepted" }] });
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ reason: "recoveryCatchup", status: "completed" });
    expect(await stub.tickTimers(at("2026-06-01T03:30:00Z"))).toMatchObject({ ok: true, decisions: [] });

    const runs = await runsOf(key, agent.id);
    expect(runs.map((run) => run.reason)).toEqual(["recoveryCatchup"]);
    const after = await getTimer(key, agent.id, timer.id);
    expect(after.nextRunAt).toBe("2026-06-01T04:00:00.000Z");
    expect(after.recentDecisions).toMatchObject([
      {
        action: "catchup",
        runKey,
        runStatus: "completed",
        decision: { missedCount: 3, firstMissedAt: "2026-06-01T01:00:00.000Z", lastMissedAt: "2026-06-01T03:00:00.000Z", cause: "timer", advancedNextRunAt: "2026-06-01T04:00:00.000Z" },
      },
    ]);
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data;
    const observation = messages.find((message: any) => message.kind === "observation");
    expect(observation.metadata).toMatchObject({ authority: "runtime_instruction", runKey });
    expect(observation.content).toMatchObject({ timerId: timer.id, missedCount: 3, firstMissedAt: "2026-06-01T01:00:00.000Z", lastMissedAt: "2026-06-01T03:00:00.000Z", cause: "timer" });
  });

  it("policy skip drops missed slots: no wake, a recorded skip, and the timer advances", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "cron", expr: "0 * * * *", timeZone: "UTC" }, catchupPolicy: "skip" });
    expect(await stub.tickTimers(at("2026-06-01T03:30:00Z"))).toMatchObject({ ok: true, decisions: [{ action: "skip", runKey: null, enqueue: null }] });
    const after = await getTimer(key, agent.id, timer.id);
    expect(after).toMatchObject({ nextRunAt: "2026-06-01T04:00:00.000Z", status: "active" });
    expect(after.recentDecisions).toMatchObject([{ action: "skip", runKey: null, runStatus: null, decision: { reason: "policy_skip", missedCount: 3 } }]);
    expect(await runsOf(key, agent.id)).toEqual([]);
  });

  it("missed slots older than the catch-up window are skipped, not caught up", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "cron", expr: "0 7 * * *", timeZone: "UTC" }, catchupWindowSeconds: 3600 });
    expect(await stub.tickTimers(at("2026-06-03T12:00:00Z"))).toMatchObject({ ok: true, decisions: [{ action: "skip" }] });
    const after = await getTimer(key, agent.id, timer.id);
    expect(after.nextRunAt).toBe("2026-06-04T07:00:00.000Z");
    expect(after.recentDecisions[0].decision).toMatchObject({ reason: "outside_catchup_window", missedCount: 3, lastMissedAt: "2026-06-03T07:00:00.000Z" });
    expect(await runsOf(key, agent.id)).toEqual([]);
  });

  it("a cron in a DST gap fires at the first valid wall-clock instant (02:30 New York on 2026-03-08 → 07:00Z)", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-03-07T12:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "cron", expr: "30 2 * * *", timeZone: "America/New_York" } });
    expect(timer.nextRunAt).toBe("2026-03-08T07:00:00.000Z");
    expect(await stub.tickTimers(at("2026-03-08T06:59:59Z"))).toMatchObject({ ok: true, decisions: [] });
    const runKey = runKeys.timer(agent.id, timer.id, "2026-03-08T07:00:00.000Z");
    expect(await stub.tickTimers(at("2026-03-08T07:00:00Z"))).toMatchObject({ ok: true, decisions: [{ action: "fire", runKey }] });
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ reason: "timer", status: "completed" });
    // The day after, 02:30 EDT exists again: 06:30Z.
    expect((await getTimer(key, agent.id, timer.id)).nextRunAt).toBe("2026-03-09T06:30:00.000Z");
  });

  it("a slot fired twice (clock moved back, duplicate delivery) runs once", async () => {
    const { tenantId, key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "cron", expr: "0 * * * *", timeZone: "UTC" } });
    const runKey = runKeys.timer(agent.id, timer.id, "2026-06-01T01:00:00.000Z");
    expect(await stub.tickTimers(at("2026-06-01T01:00:05Z"))).toMatchObject({ decisions: [{ action: "fire", runKey, enqueue: "accepted" }] });
    expect(await stub.tickTimers(at("2026-06-01T01:00:05Z"))).toMatchObject({ decisions: [] });
    // The clock steps back a minute: the timer is rescheduled onto 01:00 and that slot fires again.
    expect(await stub.tickTimers(at("2026-06-01T00:59:00Z"))).toMatchObject({ decisions: [{ action: "reschedule" }] });
    expect(await stub.tickTimers(at("2026-06-01T01:00:10Z"))).toMatchObject({ decisions: [{ action: "fire", runKey, enqueue: "duplicate" }] });
    const redelivered = await stub.enqueueWake({ tenantId, agentId: agent.id, reason: "timer", runKey, threadId: `${agent.id}:run:${runKey}`, authority: "runtime_instruction", input: {} });
    expect(redelivered).toMatchObject({ ok: true, status: "duplicate" });

    await waitForRun(key, agent.id, runKey);
    expect((await runsOf(key, agent.id)).map((run) => run.runKey)).toEqual([runKey]);
    const after = await getTimer(key, agent.id, timer.id);
    expect(after.recentDecisions.map((decision: any) => decision.action)).toEqual(["fire", "reschedule", "fire"]);
    expect(after.recentDecisions[0].decision.enqueue).toBe("duplicate");
  });

  it("a manual trigger runs the timer now without moving its schedule, once per Idempotency-Key", async () => {
    const { key, agent } = await setup();
    const timer = await createTimer(key, agent.id, { name: "report", spec: { kind: "interval", everySeconds: 3600 } });
    const first = await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key, headers: { "idempotency-key": "now-1" } });
    expect(first.status).toBe(202);
    expect(first.body.runKey).toBe(runKeys.manual(agent.id, `timer:${timer.id}:now-1`));
    expect(await waitForRun(key, agent.id, first.body.runKey)).toMatchObject({ reason: "manual", status: "completed" });
    const again = await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key, headers: { "idempotency-key": "now-1" } });
    expect(again.body.runKey).toBe(first.body.runKey);
    const other = await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key });
    expect(other.status).toBe(202);
    await waitForRun(key, agent.id, other.body.runKey);
    expect((await runsOf(key, agent.id)).filter((run) => run.reason === "manual")).toHaveLength(2);

    const after = await getTimer(key, agent.id, timer.id);
    expect(after.nextRunAt).toBe(timer.nextRunAt);
    expect(after.recentDecisions.map((decision: any) => decision.action)).toEqual(["manual_trigger", "manual_trigger"]);
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data;
    expect(messages.find((message: any) => message.kind === "observation" && message.metadata.runKey === first.body.runKey)).toMatchObject({
      text: "timer report triggered manually",
      content: { timerId: timer.id },
    });
    expect((await api("POST", `/v1/agents/${agent.id}/timers/tm_nope/trigger`, { key })).status).toBe(404);
    await api("POST", `/v1/agents/${agent.id}/pause`, { key });
    const paused = await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key });
    expect(paused).toMatchObject({ status: 409, body: { code: "agent_dormant" } });
  });

  it("a once timer fires at its instant and completes", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { name: "nudge", spec: { kind: "once", at: "2026-06-01T00:01:00Z" } });
    expect(timer).toMatchObject({ spec: { kind: "once", at: "2026-06-01T00:01:00.000Z" }, nextRunAt: "2026-06-01T00:01:00.000Z", status: "active" });
    const runKey = runKeys.timer(agent.id, timer.id, "2026-06-01T00:01:00.000Z");
    expect(await stub.tickTimers(at("2026-06-01T00:01:01Z"))).toMatchObject({ decisions: [{ action: "fire", runKey }] });
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ status: "completed" });
    expect(await getTimer(key, agent.id, timer.id)).toMatchObject({ status: "completed", nextRunAt: null });
    expect(await stub.tickTimers(at("2026-06-02T00:00:00Z"))).toMatchObject({ decisions: [] });
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data;
    expect(messages.find((message: any) => message.kind === "observation")).toMatchObject({ text: "timer nudge fired", content: { timerId: timer.id, scheduledAt: "2026-06-01T00:01:00.000Z" } });
  });

  it("a deleted timer never fires again and is listed only as a tombstone", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 60 } });
    const deleted = await api("DELETE", `/v1/agents/${agent.id}/timers/${timer.id}`, { key });
    expect(deleted).toMatchObject({ status: 200, body: { id: timer.id, status: "deleted", nextRunAt: null } });
    expect(await stub.tickTimers(at("2026-06-01T01:00:00Z"))).toMatchObject({ decisions: [] });
    expect(await runsOf(key, agent.id)).toEqual([]);
    expect((await api("GET", `/v1/agents/${agent.id}/timers`, { key })).body.data).toEqual([]);
    expect(await getTimer(key, agent.id, timer.id, "deleted")).toMatchObject({ status: "deleted" });
    expect((await api("DELETE", `/v1/agents/${agent.id}/timers/${timer.id}`, { key })).status).toBe(404);
    expect((await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key })).status).toBe(404);
  });

  it("a dormant agent's timers keep advancing while their wakes settle as skipped", async () => {
    const { key, agent, stub } = await setup();
    await stub.setTimerClock(at("2026-06-01T00:00:00Z"));
    const timer = await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 60 } });
    await api("POST", `/v1/agents/${agent.id}/pause`, { key });
    const runKey = runKeys.timer(agent.id, timer.id, "2026-06-01T00:01:00.000Z");
    expect(await stub.tickTimers(at("2026-06-01T00:01:00Z"))).toMatchObject({ decisions: [{ action: "fire", runKey }] });
    expect(await waitForRun(key, agent.id, runKey)).toMatchObject({ status: "skipped_sleeping" });
    expect((await getTimer(key, agent.id, timer.id)).nextRunAt).toBe("2026-06-01T00:02:00.000Z");
  });

  it("destroying the agent tombstones its timers and releases the alarm", async () => {
    const { key, agent, stub } = await setup();
    await createTimer(key, agent.id, { spec: { kind: "interval", everySeconds: 60 } });
    await createTimer(key, agent.id, { spec: { kind: "cron", expr: "0 7 * * *", timeZone: "Europe/Berlin" } });
    expect((await timerSchedules(stub)).times).toHaveLength(1);
    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    const listed = (await api("GET", `/v1/agents/${agent.id}/timers?include=deleted`, { key })).body.data;
    expect(listed.map((timer: any) => [timer.status, timer.nextRunAt])).toEqual([["deleted", null], ["deleted", null]]);
    expect((await timerSchedules(stub)).times).toEqual([]);
    expect(await stub.tickTimers(Date.now() + 86_400_000)).toMatchObject({ decisions: [] });
    expect(await runsOf(key, agent.id)).toEqual([]);
    const create = await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 60 } } });
    expect(create).toMatchObject({ status: 410, body: { code: "agent_destroyed" } });
  });

  it("rejects bad specs with a problem naming the field", async () => {
    const { key, agent } = await setup();
    const cases: Array<[unknown, string, string | RegExp]> = [
      [{ spec: { kind: "cron", expr: "0 25 * * *", timeZone: "UTC" } }, "spec.expr", "cron field 'hour' value 25 out of range 0-23"],
      [{ spec: { kind: "cron", expr: "0 7 * *", timeZone: "UTC" } }, "spec.expr", /must have 5 fields/],
      [{ spec: { kind: "cron", expr: "0 7 * * *", timeZone: "Mars/Olympus" } }, "spec.timeZone", /IANA/],
      [{ spec: { kind: "interval", everySeconds: 0 } }, "spec.everySeconds", /.+/],
      [{ spec: { kind: "once", at: "tomorrow" } }, "spec.at", /.+/],
      [{ spec: { kind: "weekly" } }, "spec.kind", /.+/],
      [{ spec: { kind: "interval", everySeconds: 60 }, catchupPolicy: "later" }, "catchupPolicy", /.+/],
      [{ spec: { kind: "interval", everySeconds: 60 }, catchupWindowSeconds: 0 }, "catchupWindowSeconds", /.+/],
    ];
    for (const [body, path, message] of cases) {
      const res = await api("POST", `/v1/agents/${agent.id}/timers`, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.code).toBe("validation_failed");
      const issue = res.body.errors.find((error: any) => error.path === path);
      expect(issue, `${JSON.stringify(body)} → ${JSON.stringify(res.body.errors)}`).toBeDefined();
      expect(issue.message).toMatch(message);
    }
    expect((await api("GET", `/v1/agents/${agent.id}/timers`, { key })).body.data).toEqual([]);
  });

  it("documents the timer routes in the OpenAPI document", async () => {
    const { key } = await createTenant();
    const res = await api("GET", "/v1/openapi.json", { key });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    const doc = res.body;
    expect(Object.keys(doc.paths["/v1/agents/{id}/timers"])).toEqual(expect.arrayContaining(["get", "post"]));
    expect(Object.keys(doc.paths["/v1/agents/{id}/timers/{tid}"])).toEqual(["delete"]);
    expect(Object.keys(doc.paths["/v1/agents/{id}/timers/{tid}/trigger"])).toEqual(["post"]);
    expect(doc.components.schemas.Timer.properties.nextRunAt).toBeDefined();
  });

  it("answers 404 for another tenant's agent and timers", async () => {
    const owner = await setup();
    const timer = await createTimer(owner.key, owner.agent.id, { spec: { kind: "interval", everySeconds: 60 } });
    const { key: intruder } = await createTenant("intruder");
    const base = `/v1/agents/${owner.agent.id}/timers`;
    expect((await api("GET", base, { key: intruder })).status).toBe(404);
    expect((await api("POST", base, { key: intruder, body: { spec: { kind: "interval", everySeconds: 60 } } })).status).toBe(404);
    expect((await api("DELETE", `${base}/${timer.id}`, { key: intruder })).status).toBe(404);
    expect((await api("POST", `${base}/${timer.id}/trigger`, { key: intruder })).status).toBe(404);
    expect(await getTimer(owner.key, owner.agent.id, timer.id)).toMatchObject({ status: "active", recentDecisions: [] });
  });
});
