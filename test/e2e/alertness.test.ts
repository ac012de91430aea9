import { createHmac } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Run, VigilClient } from "../../src/client";
import { raw, type RawResponse, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

// Alertness end to end: journal writes, signed webhook sources, external triggers and
// timers wake agents through a real `wrangler dev` (queue, DOs, SQLite), over real HTTP.
//
// "Nothing else woke" is proven without sleeping on a guess: after the negative case, a later
// positive that travels the same path (same dispatcher, same queue, batches dispatched oldest
// first) must arrive, and only then are run logs compared.

let server: VigilServer;
let client: VigilClient;
let apiKey: string;

beforeAll(async () => {
  server = sharedServer();
  ({ client, apiKey } = await server.tenant("alertness"));
});

/** An API call with the tenant's key; the raw answer, whatever the status. */
function api<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse<T>> {
  return raw<T>(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function created<T = any>(path: string, body: unknown): Promise<T> {
  const res = await api<T>("POST", path, body);
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
  return res.body;
}

const TASK = { tokenClass: "semanticKey", tokenValue: "TASK" };

async function runs(agentId: string): Promise<Run[]> {
  return (await client.listRuns(agentId, { limit: 100 })).data;
}

/** Waits until the agent has `count` runs, all terminal; returns them oldest first (a generous bound: queued wakes on a loaded machine). */
async function settledRuns(agentId: string, count: number, timeoutMs = 60_000): Promise<Run[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await runs(agentId);
    if (list.length >= count && list.every((run) => ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal"].includes(run.status))) return list.reverse();
    if (Date.now() > deadline) throw new Error(`agent ${agentId}: ${list.length} runs (${list.map((r) => r.status).join(", ")}) after ${timeoutMs} ms, expected ${count}\n${server.logs(30)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The one observation a subscription wake put in its run's thread: what matched, and its authority label. */
async function observed(agentId: string, run: Run): Promise<{ trigger: any; authority: string }> {
  const messages = (await client.listMessages(agentId, { threadId: run.threadId, limit: 50 })).data as Array<{ kind: string; content?: any; metadata?: any }>;
  const observations = messages.filter((message) => message.kind === "observation");
  expect(observations).toHaveLength(1);
  return { trigger: observations[0]!.content.trigger, authority: observations[0]!.metadata.authority };
}

function vigilSignature(secret: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

/** One delivery to a webhook source, signed with `secret` at send time. */
function deliver(url: string, secret: string, body: string, deliveryId: string, t?: number): Promise<RawResponse<any>> {
  return raw(url, { method: "POST", headers: { "content-type": "application/json", "vigil-signature": vigilSignature(secret, body, t), "x-vigil-delivery": deliveryId }, body });
}

describe("alertness: what wakes an agent", () => {
  it("a journal task write in gym wakes the gym coach (predicate categoryId == gym) and not the agent watching another category", async () => {
    const gym = await created("/v1/journal/categories", { name: "gym" });
    const work = await created("/v1/journal/categories", { name: "work" });
    const coach = await client.createAgent({ kind: "gym-coach", displayName: "Coach" });
    const planner = await client.createAgent({ kind: "planner", displayName: "Planner" });
    await created(`/v1/agents/${coach.id}/subscriptions`, { tokens: [TASK], predicate: { eq: ["task.categoryId", gym.id] } });
    await created(`/v1/agents/${planner.id}/subscriptions`, { tokens: [TASK], predicate: { eq: ["task.categoryId", work.id] } });

    const legDay = await created("/v1/journal/tasks", { title: "Leg day", categoryId: gym.id });
    const [coachRun] = await settledRuns(coach.id, 1);
    expect(coachRun).toMatchObject({ reason: "subscription", status: "completed" });

    // The later positive: a work task reaches the planner, so the gym write's dispatch is long done.
    const report = await created("/v1/journal/tasks", { title: "Quarterly report", categoryId: work.id });
    const [plannerRun] = await settledRuns(planner.id, 1);
    expect(plannerRun).toMatchObject({ reason: "subscription", status: "completed" });
    expect(await runs(planner.id)).toHaveLength(1);
    expect(await runs(coach.id)).toHaveLength(1);
    // Each run answered its own change: the observation in the run's thread names that task only.
    expect((await observed(coach.id, coachRun!)).trigger).toMatchObject({ source: "journal", matchedTokenKeys: ["semanticKey|-|TASK"], matchedEntityIds: [legDay.id] });
    expect((await observed(planner.id, plannerRun!)).trigger).toMatchObject({ source: "journal", matchedEntityIds: [report.id] });
    expect([coachRun, plannerRun].map((run) => run!.trace.coalescedRunKeys)).toEqual([[], []]);
  });

  it("a signed webhook-source delivery wakes its subscriber once, even delivered 3 times; a forged signature is 401 and stores nothing", async () => {
    const source = await created<{ id: string; url: string; secret: string }>("/v1/webhook-sources", {
      name: "ci",
      scheme: "vigil",
      tokenMapping: { semanticKey: "DEPLOY_FINISHED", entityIdFrom: "body:service" },
    });
    expect(source.url).toBe(`${server.url}/v1/hooks/s/${source.id}`);
    expect(source.secret).toEqual(expect.any(String));
    const watcher = await client.createAgent({ kind: "release-watcher", displayName: "Watcher" });
    await created(`/v1/agents/${watcher.id}/subscriptions`, { tokens: [{ tokenClass: "semanticKey", tokenValue: "DEPLOY_FINISHED" }] });

    const body = JSON.stringify({ service: "api", version: "1.4.2" });
    const answers = await Promise.all([1, 2, 3].map(() => deliver(source.url, source.secret, body, "deploy-1")));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.logicalChangeKey)).size).toBe(1);
    const [first] = await settledRuns(watcher.id, 1);
    expect(first).toMatchObject({ reason: "subscription", status: "completed" });
    expect(await observed(watcher.id, first!)).toEqual({
      trigger: expect.objectContaining({ source: `webhook:${source.id}`, origin: "webhook", logicalChangeKey: answers[0]!.body.logicalChangeKey }),
      authority: "external_evidence",
    });

    // Forged: right shape, wrong key → 401, and the delivery id stays unused.
    const forgedBody = JSON.stringify({ service: "api", version: "6.6.6" });
    const forged = await raw(source.url, {
      method: "POST",
      headers: { "content-type": "application/json", "vigil-signature": vigilSignature("not-the-secret", forgedBody), "x-vigil-delivery": "deploy-2" },
      body: forgedBody,
    });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ code: "signature_invalid" });
    const stale = await deliver(source.url, source.secret, forgedBody, "deploy-2", Math.floor(Date.now() / 1000) - 3_600);
    expect(stale.status).toBe(401);
    expect(stale.body).toMatchObject({ code: "timestamp_stale" });

    // Nothing was stored for deploy-2: a genuine delivery with that id is new, and is the only other wake.
    const genuine = await deliver(source.url, source.secret, JSON.stringify({ service: "api", version: "1.4.3" }), "deploy-2");
    expect(genuine.status).toBe(202);
    expect(genuine.body.duplicate).toBe(false);
    const all = await settledRuns(watcher.id, 2);
    expect(all).toHaveLength(2);
    expect(all.every((run) => run.reason === "subscription" && run.status === "completed")).toBe(true);
    expect(await runs(watcher.id)).toHaveLength(2);
  });

  it("an external trigger delivery wakes its agent once; the same delivery id again is still one run", async () => {
    const agent = await client.createAgent({ kind: "deployer", displayName: "Deployer" });
    const trigger = await api<{ triggerId: string; url: string; status: string }>("POST", `/v1/agents/${agent.id}/trigger`, {});
    expect(trigger.status).toBe(201);
    expect(trigger.body.status).toBe("active");
    const url = trigger.body.url.replace(/^https?:\/\/[^/]+/, server.url);
    const send = (deliveryId: string, text = "deploy finished") => raw(url, { method: "POST", headers: { "content-type": "application/json", "x-vigil-delivery": deliveryId }, body: JSON.stringify({ text }) });

    const once = await send("hook-1");
    const again = await send("hook-1");
    expect([once.status, again.status]).toEqual([202, 202]);
    expect(once.body.duplicate).toBe(false);
    expect(again.body).toEqual({ runKey: once.body.runKey, duplicate: true });
    await expect(client.waitForRun(agent.id, once.body.runKey, { timeoutMs: 60_000 })).resolves.toMatchObject({ reason: "webhook", status: "completed" });

    const badToken = await raw(url.replace(/token=[^&]+/, "token=wrong"), { method: "POST", headers: { "x-vigil-delivery": "hook-3" }, body: "{}" });
    expect(badToken.status).toBe(401);

    const next = await send("hook-2", "second deploy");
    expect(next.body.runKey).not.toBe(once.body.runKey);
    const all = await settledRuns(agent.id, 2);
    expect(all.map((run) => run.runKey)).toEqual([once.body.runKey, next.body.runKey]);
  });

  it("a timer triggered manually runs now and records the decision", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Morning coach" });
    // A daily slot twelve hours from now: the scheduled firing cannot land during the test and add a second run.
    const farHour = (new Date().getUTCHours() + 12) % 24;
    const timer = await created<{ id: string }>(`/v1/agents/${agent.id}/timers`, { name: "morning check-in", spec: { kind: "cron", expr: `0 ${farHour} * * *`, timeZone: "UTC" } });
    const fired = await api<{ runKey: string }>("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`);
    expect(fired.status).toBe(202);
    const run = await client.waitForRun(agent.id, fired.body.runKey, { timeoutMs: 60_000 });
    expect(run).toMatchObject({ runKey: fired.body.runKey, reason: "manual", status: "completed" });
    expect(await runs(agent.id)).toHaveLength(1);
    const listed = await api("GET", `/v1/agents/${agent.id}/timers`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain("manual_trigger");
    expect(JSON.stringify(listed.body)).toContain(fired.body.runKey);
  });
});
