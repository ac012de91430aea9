import { env, runInDurableObject, SELF } from "cloudflare:test";
import { tenantStub } from "../../src/objects/shared/stubs";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, inDo, parseSse as parseSseFrames, readSseUntil, waitForRun } from "./helpers";

type Frame = { id?: number; event: string; data: any };

function openStream(key: string, options: { after?: number; lastEventId?: number; agentId?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (options.lastEventId !== undefined) headers["last-event-id"] = String(options.lastEventId);
  const query = new URLSearchParams();
  if (options.after !== undefined) query.set("after", String(options.after));
  if (options.agentId !== undefined) query.set("agentId", options.agentId);
  const qs = query.toString();
  return SELF.fetch(`https://vigil.test/v1/events/stream${qs ? `?${qs}` : ""}`, { headers });
}

const completedFor = (agentId: string, runKey: string) => (frames: Frame[]) => frames.some((f) => f.event === "run.completed" && f.data.agentId === agentId && f.data.runKey === runKey);

async function runTurn(key: string, agentId: string, text: string): Promise<string> {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status).toBe(202);
  await waitForRun(key, agentId, sent.body.runKey);
  return sent.body.runKey;
}

describe("GET /v1/events/stream (tenant-wide)", () => {
  it("replays every agent's non-live events tagged with agentId, in one seq order, without deltas or bookkeeping", async () => {
    const { key } = await createTenant("stream-replay");
    const coach = await createAgent(key, { displayName: "Coach" });
    const planner = await createAgent(key, { displayName: "Planner" });
    const runA = await runTurn(key, coach.id, "hello coach");
    const runB = await runTurn(key, planner.id, "hello planner");

    const response = await openStream(key);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const frames = await readSseUntil(response, (all) => completedFor(coach.id, runA)(all) && completedFor(planner.id, runB)(all));
    const types = new Set(frames.map((f) => f.event));
    for (const type of ["lifecycle.changed", "run.started", "message.appended", "run.completed"]) expect(types).toContain(type);
    expect(types).not.toContain("text.delta");
    expect(types).not.toContain("wake.enqueued");
    const ids = frames.map((f) => f.id!);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    for (const frame of frames) {
      expect(frame.data.seq).toBe(frame.id);
      expect([coach.id, planner.id]).toContain(frame.data.agentId);
      expect(typeof frame.data.agentSeq).toBe("number");
    }
    const reply = frames.find((f) => f.event === "message.appended" && f.data.agentId === coach.id && f.data.data.message.kind === "assistant");
    expect(reply?.data.data.message.text).toBe("echo: hello coach");
  });

  it("resumes after Last-Event-ID or ?after= with nothing repeated, then goes live", async () => {
    const { key } = await createTenant("stream-resume");
    const agent = await createAgent(key);
    const first = await runTurn(key, agent.id, "one");
    const all = await readSseUntil(await openStream(key), completedFor(agent.id, first));
    const cut = all[Math.floor(all.length / 2)]!.id!;

    const resumed = await readSseUntil(await openStream(key, { lastEventId: cut }), completedFor(agent.id, first));
    expect(resumed.map((f) => f.id)).toEqual(all.filter((f) => f.id! > cut).map((f) => f.id));
    const viaQuery = await readSseUntil(await openStream(key, { after: cut }), completedFor(agent.id, first));
    expect(viaQuery.map((f) => f.id)).toEqual(resumed.map((f) => f.id));

    // Live: open at the tip, then a new run arrives on the open stream.
    const tip = all[all.length - 1]!.id!;
    const live = await openStream(key, { after: tip });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "two" } });
    const liveFrames = await readSseUntil(live, completedFor(agent.id, sent.body.runKey));
    expect(liveFrames.every((f) => f.id! > tip)).toBe(true);
    expect(liveFrames.some((f) => f.event === "message.appended" && f.data.data.message.text === "two")).toBe(true);
  });

  it("refuses widget tokens (every visitor's conversation crosses it), and ?agentId narrows a key's stream", async () => {
    const { key } = await createTenant("stream-scope");
    const mine = await createAgent(key);
    const other = await createAgent(key);
    const runMine = await runTurn(key, mine.id, "mine");
    const runOther = await runTurn(key, other.id, "other");
    // Both runs are in the tenant log before the narrowed streams are read.
    await readSseUntil(await openStream(key), (f) => completedFor(mine.id, runMine)(f) && completedFor(other.id, runOther)(f));

    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "viewer", agents: [mine.id], ttlSeconds: 600 } });
    const widget = await openStream(minted.body.token);
    expect(widget.status).toBe(403);
    expect(((await widget.json()) as { code: string }).code).toBe("forbidden");

    const narrowed = await readSseUntil(await openStream(key, { agentId: other.id }), completedFor(other.id, runOther));
    expect(narrowed.every((f) => f.data.agentId === other.id)).toBe(true);
  });

  it("carries tenant-level events: an answered question's decision.resolved, once, after the agent's decision.requested", async () => {
    const { key } = await createTenant("stream-decisions");
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [{ when: {}, reply: "asked" }] } });
    const text = '/tool ask_user {"question":"Which day?","options":[{"id":"mon","label":"Monday"}]}';
    await runTurn(key, agent.id, text);
    const pending = await api("GET", "/v1/decisions?status=pending", { key });
    const decision = pending.body.data.find((d: any) => d.agentId === agent.id);
    const resolved = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(resolved.status).toBe(200);
    const frames = await readSseUntil(await openStream(key), (all) => all.some((f) => f.event === "decision.resolved"));
    const requested = frames.filter((f) => f.event === "decision.requested" && f.data.data.decisionId === decision.id);
    const answered = frames.filter((f) => f.event === "decision.resolved" && f.data.data.decisionId === decision.id);
    expect(requested).toHaveLength(1);
    expect(answered).toHaveLength(1);
    expect(answered[0]!.data).toMatchObject({ agentId: agent.id, agentSeq: null, data: { kind: "ask_user", resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(answered[0]!.id!).toBeGreaterThan(requested[0]!.id!);
  });

  it("carries brakes: brake.engaged and brake.released, without the operator's free-text reason", async () => {
    const { key } = await createTenant("stream-brakes");
    const engaged = await api("POST", "/v1/brakes", { key, body: { scope: "all", behaviour: "pause", release: "manual", reason: "incident 42 — secret details" } });
    expect(engaged.status, JSON.stringify(engaged.body)).toBe(201);
    expect((await api("POST", `/v1/brakes/${engaged.body.id}/release`, { key })).status).toBe(200);
    const frames = await readSseUntil(await openStream(key), (all) => all.some((f) => f.event === "brake.released"));
    const brakeFrames = frames.filter((f) => f.event.startsWith("brake."));
    expect(brakeFrames.map((f) => f.event)).toEqual(["brake.engaged", "brake.released"]);
    expect(brakeFrames[0]!.data.data).toMatchObject({ brakeId: engaged.body.id, scope: "all", behaviour: "pause", release: "manual" });
    expect(brakeFrames[1]!.data.data).toMatchObject({ brakeId: engaged.body.id, how: "manual" });
    expect(JSON.stringify(brakeFrames)).not.toContain("incident 42");
  });

  it("records a re-sent agent batch once (dedupe by agentId and agent seq), so forwarding may retry freely", async () => {
    const { tenantId, key } = await createTenant("stream-dedupe");
    const agent = await createAgent(key);
    const tenant = tenantStub(env as never, tenantId);
    const batch = [
      { seq: 9_001, type: "state.changed", runKey: null, data: { state: { revision: 7 } }, createdAt: new Date().toISOString() },
      { seq: 9_002, type: "report.published", runKey: "rk", data: { scope: "daily", reportId: "rp_1", action: "created" }, createdAt: new Date().toISOString() },
    ];
    const report = (events: typeof batch) => tenant.reportRun(agent.id, { events, agent: null, activities: [], outcomes: [], calls: [] });
    expect(await report(batch)).toMatchObject({ ok: true, recorded: 2 });
    expect(await report([...batch].reverse())).toMatchObject({ ok: true, recorded: 0 });
    const frames = await readSseUntil(await openStream(key, { agentId: agent.id }), (all) => all.some((f) => f.data.agentSeq === 9_002));
    expect(frames.filter((f) => f.data.agentSeq >= 9_001).map((f) => [f.event, f.data.agentSeq])).toEqual([
      ["state.changed", 9_001],
      ["report.published", 9_002],
    ]);
  });

  it("skips a re-sent agent event at or below the agent's recorded head even after the tenant pruned it (an agent's stored cursor may lag)", async () => {
    const { tenantId, key } = await createTenant("stream-pruned");
    const agent = await createAgent(key);
    const tenant = tenantStub(env as never, tenantId);
    const event = (seq: number) => ({ seq, type: "state.changed", runKey: null, data: { state: { revision: seq } }, createdAt: new Date().toISOString() });
    const report = (events: ReturnType<typeof event>[]) => tenant.reportRun(agent.id, { events, agent: null, activities: [], outcomes: [], calls: [] });
    expect(await report([event(9_101), event(9_102)])).toMatchObject({ ok: true, recorded: 2 });
    // Retention prunes them (by age or row cap): only the agent's report numbering knows them.
    const rows = (sql: string) => runInDurableObject(env.TENANT.get(env.TENANT.idFromName(tenantId)), (_instance, state) => state.storage.sql.exec(sql, agent.id).toArray());
    await rows("DELETE FROM tenant_events WHERE agent_id = ?");
    // The agent restarted with its cursor before them: it re-sends them with a new one.
    expect(await report([event(9_101), event(9_102), event(9_103)])).toMatchObject({ ok: true, recorded: 1 });
    expect((await rows("SELECT item.value ->> '$[1]' AS agentSeq FROM tenant_events, json_each(tenant_events.items) AS item WHERE agent_id = ? ORDER BY seq, item.key")).map((row) => row.agentSeq)).toEqual([9_103]);
  });

  it("a published report reaches each live subscriber in seq order, whole, and a narrowed stream only its agent's (session 14: one write per subscriber)", async () => {
    const { tenantId, key } = await createTenant("stream-publish");
    const mine = await createAgent(key);
    const other = await createAgent(key);
    const types = ["message.appended", "run.started", "state.changed", "message.appended", "run.completed"];
    const events = (from: number, count: number) => types.slice(0, count).map((type, i) => ({ seq: from + i, type, runKey: "rk_publish", data: { i }, createdAt: new Date().toISOString() }));
    const report = (agentId: string, from: number, count: number) => ({ events: events(from, count), agent: null, activities: [], outcomes: [], calls: [] });
    const read = async (stream: ReadableStream<Uint8Array>, frames: number) => {
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (parseSseFrames(text).length < frames) text += decoder.decode((await reader.read()).value);
      await reader.cancel();
      return parseSseFrames(text);
    };
    type Seen = { tip: number; all: Frame[]; narrowed: Frame[]; buffered: Frame[] };
    const seen = await inDo<Promise<Seen>>(env.TENANT.get(env.TENANT.idFromName(tenantId)), async (tenant, state) => {
      const tip = Number(state.storage.sql.exec("SELECT coalesce(max(seq), 0) AS seq FROM tenant_events").one().seq);
      // Live: subscribed, and its replay (nothing after the tip) over before the reports.
      const all = tenant.parts.tenantEvents.subscribe(tip, null);
      const narrowed = tenant.parts.tenantEvents.subscribe(tip, [mine.id]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Subscribed in the same stretch as the first report: its events wait in the buffer until the replay is over.
      const buffered = tenant.parts.tenantEvents.subscribe(tip, [mine.id]);
      expect(await tenant.reportRun(mine.id, report(mine.id, 501, 5))).toMatchObject({ ok: true, recorded: 5 });
      expect(await tenant.reportRun(other.id, report(other.id, 701, 3))).toMatchObject({ ok: true, recorded: 3 });
      expect(await tenant.reportRun(mine.id, report(mine.id, 506, 2))).toMatchObject({ ok: true, recorded: 2 });
      return { tip, all: await read(all, 10), narrowed: await read(narrowed, 7), buffered: await read(buffered, 7) };
    });
    const expected = [
      ...events(501, 5).map((e) => [mine.id, e.seq, e.type]),
      ...events(701, 3).map((e) => [other.id, e.seq, e.type]),
      ...events(506, 2).map((e) => [mine.id, e.seq, e.type]),
    ];
    expect(seen.all.map((f) => [f.data.agentId, f.data.agentSeq, f.event])).toEqual(expected);
    expect(seen.all.map((f) => f.id)).toEqual(expected.map((_, i) => seen.tip + 1 + i));
    for (const frame of seen.all) expect(frame.data.seq).toBe(frame.id);
    const minePart = seen.all.filter((f) => f.data.agentId === mine.id);
    expect(seen.narrowed).toEqual(minePart);
    expect(seen.buffered).toEqual(minePart);
  });

  it("rejects a malformed cursor with 400 and another tenant sees none of it", async () => {
    const a = await createTenant("stream-a");
    const b = await createTenant("stream-b");
    const agent = await createAgent(a.key);
    await runTurn(a.key, agent.id, "private");
    const bad = await openStream(a.key, { lastEventId: -1 as number });
    expect(bad.status).toBe(400);
    expect((await bad.json<any>()).code).toBe("validation_failed");
    await eventually(async () => (await readSseUntil(await openStream(a.key), (f) => f.some((x) => x.event === "run.completed"), 2_000)).length > 0);
    const theirs = await readSseUntil(await openStream(b.key), () => false, 500);
    expect(theirs).toEqual([]);
  });
});
