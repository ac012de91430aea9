import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { TERMINAL_RUN_STATUSES } from "../../src/schema/agents/runs";
import { collectSse, delay, DevServer, raw } from "./harness";

/**
 * The crash matrix: the whole server (process group) SIGKILLed at many moments of tool turns and streaming turns, then
 * restarted on the same state. Each kill lands at a different moment of several turns on different agents (a batch);
 * every turn of every batch is then checked, not a sample. Production configuration: no seam is on (the kill is real).
 */
let server: DevServer;

beforeAll(async () => {
  server = await DevServer.start();
});

afterAll(async () => {
  await server?.dispose();
});

type Kind = "tool" | "stream";

/**
 * The kill moments aimed at, in ms after a turn was accepted (a tool turn's `202`, a streaming turn's response head),
 * one batch per kill, each turn on its own agent. Within a batch the turns start one after another, the latest moment
 * first, each once the one before it was accepted (concurrent starts are answered in bursts, which would land many
 * turns on one moment). Where they land is measured and reported; the last of each batch (its smallest) lands exactly.
 */
const AIMED: Array<Array<[Kind, number]>> = [
  [["stream", 1500], ["tool", 600], ["tool", 300], ["tool", 0]],
  [["tool", 650], ["tool", 330], ["tool", 5]],
  [["stream", 700], ["tool", 560], ["tool", 270], ["tool", 10]],
  [["tool", 620], ["tool", 240], ["tool", 15]],
  [["tool", 580], ["tool", 210], ["tool", 20]],
  [["tool", 540], ["tool", 180], ["tool", 30], ["stream", 0]],
  [["tool", 500], ["tool", 150], ["tool", 40]],
  [["stream", 300], ["tool", 460], ["tool", 120], ["tool", 60]],
  [["tool", 420], ["tool", 100], ["tool", 80], ["stream", 20]],
];
const BATCHES = AIMED.map((batch) => [...batch].sort((x, y) => y[1] - x[1]));
/** Two watch intervals of the default configuration: the bound in which every run must have converged. */
const BOUND_MS = 2 * Math.max(config.run.sagaWatchSeconds, config.run.watchdogSeconds) * 1000;

interface Point {
  kind: Kind;
  offset: number;
  agentId: string;
  /** A tool turn's own category (its task is counted there) and the task's title; a streaming turn's text. */
  categoryId?: string;
  text: string;
  runKey?: string;
  acceptedAt?: number;
  measured?: number;
}

/** The last time an acceptance took, per kind of turn (carried from batch to batch: the next estimate). */
const latency: Record<Kind, number> = { tool: 200, stream: 200 };

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

describe("a SIGKILL of the whole server at any moment of a turn converges after the restart", () => {
  it("every run ends, each tool effect happens once, and no accepted message is lost — at every kill point", async () => {
    const { apiKey } = await server.tenant("crash-matrix");
    const call: Call = (method, path, body) =>
      raw<any>(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    const all: Point[] = [];
    const report: string[] = [];
    for (const [index, batch] of BATCHES.entries()) {
      const points = await Promise.all(batch.map(([kind, offset], turn) => preparePoint(call, kind, offset, `${index}.${turn}`)));
      const { killedAt, readers } = await startTurns(apiKey, call, points);
      await server.kill();
      await Promise.allSettled(readers);
      await server.launch();
      const restartedAt = Date.now();
      for (const point of points) point.measured = killedAt - point.acceptedAt!;
      const settledAfter = await awaitConvergence(call, points, restartedAt);
      report.push(`batch ${index}: ${points.map((p, i) => `${p.kind} +${p.measured}ms → ${settledAfter[i]}ms`).join(", ")}`);
      await checkPoints(call, points);
      all.push(...points);
    }
    console.log(`crash matrix (kill point after acceptance → settled after the restart):\n${report.join("\n")}`);
    // The kill points as they landed: at least 20 distinct moments of a tool turn's first second, its first 40 ms among them.
    const toolMoments = all.filter((p) => p.kind === "tool").map((p) => p.measured!);
    expect(new Set(toolMoments.filter((ms) => ms <= 1_000)).size).toBeGreaterThanOrEqual(20);
    expect(toolMoments.filter((ms) => ms <= 40).length).toBeGreaterThanOrEqual(5);
  }, 600_000);
});

/** A fresh agent for one kill point: a playbook agent in its own category for a tool turn, a slow echo for a stream. */
async function preparePoint(call: Call, kind: Kind, offset: number, label: string): Promise<Point> {
  if (kind === "stream") {
    const agent = (await call("POST", "/v1/agents", { kind: "coach", displayName: `Stream ${label}`, modelOptions: { chunkDelayMs: 150 } })).body;
    return { kind, offset, agentId: agent.id, text: `${label} ${Array.from({ length: 24 }, (_, i) => `w${i}`).join(" ")}` };
  }
  const category = (await call("POST", "/v1/journal/categories", { name: `Crash ${label}` })).body;
  const agent = (
    await call("POST", "/v1/agents", {
      kind: "coach",
      displayName: `Tool ${label}`,
      model: "builtin:playbook",
      allowedCategoryIds: [category.id],
      playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
      modelOptions: { chunkDelayMs: 800 },
    })
  ).body;
  return { kind, offset, agentId: agent.id, categoryId: category.id, text: `Once ${label}` };
}

/**
 * Starts the batch's turns one after another (largest moment first), each timed by the last acceptance's latency so
 * that it is accepted `offset` ms before the kill; answers the moment to kill: `offset` ms after the last acceptance.
 */
async function startTurns(apiKey: string, call: Call, points: Point[]): Promise<{ killedAt: number; readers: Array<Promise<unknown>> }> {
  const readers: Array<Promise<unknown>> = [];
  let killAt = 0;
  for (const point of points) {
    if (killAt) await delay(Math.max(0, killAt - point.offset - latency[point.kind] - Date.now()));
    const sentAt = Date.now();
    if (point.kind === "tool") {
      const sent = await call("POST", `/v1/agents/${point.agentId}/messages`, { text: `/tool create_task {"title":"${point.text}","categoryId":"${point.categoryId}"}` });
      expect(sent.status).toBe(202);
      point.runKey = sent.body.runKey;
    } else {
      const response = await fetch(`${server.url}/v1/agents/${point.agentId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ text: point.text }),
      });
      expect(response.status).toBe(200);
      point.runKey = response.headers.get("x-vigil-run-key")!;
      // The stream is read until the kill cuts it (its end is checked on the stored run, after the restart).
      readers.push(collectSse(response, () => false, 120_000));
    }
    point.acceptedAt = Date.now();
    latency[point.kind] = point.acceptedAt - sentAt;
    killAt = killAt === 0 || point === points.at(-1) ? point.acceptedAt + point.offset : killAt;
  }
  await delay(Math.max(0, killAt - Date.now()));
  return { killedAt: Date.now(), readers };
}

/** Reads each run (a plain GET, nothing else touches the agents) until all are terminal or the bound has passed. */
async function awaitConvergence(call: Call, points: Point[], restartedAt: number): Promise<number[]> {
  const settledAfter: Array<number | null> = points.map(() => null);
  while (settledAfter.includes(null) && Date.now() < restartedAt + BOUND_MS) {
    for (const [i, point] of points.entries()) {
      if (settledAfter[i] !== null) continue;
      const run = (await call("GET", `/v1/agents/${point.agentId}/runs/${point.runKey}`).catch(() => null))?.body;
      if (run && TERMINAL_RUN_STATUSES.includes(run.status)) settledAfter[i] = Date.now() - restartedAt;
    }
    await delay(500);
  }
  const stuck = [];
  for (const [i, point] of points.entries()) {
    if (settledAfter[i] !== null) continue;
    const run = (await call("GET", `/v1/agents/${point.agentId}/runs/${point.runKey}`)).body;
    stuck.push({ kind: point.kind, killedAfterMs: point.measured, status: run.status, errorCode: run.errorCode });
  }
  expect(stuck).toEqual([]);
  return settledAfter as number[];
}

/** The three properties at one kill point: the run completed, its effect happened once, its message is kept. */
async function checkPoints(call: Call, points: Point[]): Promise<void> {
  await Promise.all(points.map((point) => checkPoint(call, point)));
}

async function checkPoint(call: Call, point: Point): Promise<void> {
  const run = (await call("GET", `/v1/agents/${point.agentId}/runs/${point.runKey}`)).body;
  const messages = (await call("GET", `/v1/agents/${point.agentId}/messages?limit=50`)).body.data as any[];
  const user = messages.filter((m) => m.kind === "user").map((m) => m.text);
  const replies = messages.filter((m) => m.kind === "assistant" && m.metadata?.final !== false).map((m) => m.text);
  const at = { kind: point.kind, killedAfterMs: point.measured };
  if (point.kind === "stream") {
    expect({ ...at, status: run.status, user, replies }).toEqual({ ...at, status: "completed", user: [point.text], replies: [`echo: ${point.text}`] });
    return;
  }
  const tasks = ((await call("GET", `/v1/journal/tasks?categoryId=${point.categoryId}`)).body.data as any[]).map((task) => task.title);
  const toolResults = messages.filter((m) => m.kind === "toolResult").length;
  expect({ ...at, status: run.status, tasks, toolResults, userMessages: user.length, replies }).toEqual({
    ...at,
    status: "completed",
    tasks: [point.text],
    toolResults: 1,
    userMessages: 1,
    replies: [`done: ${point.text}`],
  });
}
