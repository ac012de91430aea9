// (b) Wake overhead with the builtin model: ingress → run terminal → event delivered,
// reported against the raw cost of one DO SQLite write and one empty Worker request, all measured
// in the same run and interleaved (one empty request per wake, one SQLite round every few wakes).
import { openSse } from "./lib/client.mjs";
import { fmt, percentile, summarize, table } from "./lib/stats.mjs";

export const defaults = {
  wakes: 200,
  warmupWakes: 10,
  wakeTimeoutMs: 10_000,
  /** Stop after this many wakes in a row that did not complete (do not burn minutes on a broken server). */
  maxConsecutiveFailures: 3,
  sqliteIterations: 2_000,
  sqliteEvery: 10,
};

export async function runWakeBench({ client, log, params: overrides = {} }) {
  const params = { ...defaults, ...overrides };
  const { wakes, warmupWakes, wakeTimeoutMs, maxConsecutiveFailures, sqliteIterations: N, sqliteEvery } = params;

  const { body: agent } = await client.call("POST", "/v1/agents", { kind: "bench-wake", displayName: "bench wake" });
  const { body: sqliteAgent } = await client.call("POST", "/v1/agents", { kind: "bench-sqlite", displayName: "bench sqlite" });

  // runKey → { type, at }; runKey → resolver. A terminal frame may arrive before the 202 does.
  const terminals = new Map();
  const waiters = new Map();
  const frameCounts = {};
  const sse = openSse(`${client.baseUrl}/v1/agents/${agent.id}/events`, client.token, (frame) => {
    frameCounts[frame.event] = (frameCounts[frame.event] ?? 0) + 1;
    if (frame.event !== "run.completed" && frame.event !== "run.failed") return;
    const runKey = frame.data?.runKey;
    if (!runKey) return;
    const hit = { type: frame.event, at: frame.at, data: frame.data };
    terminals.set(runKey, hit);
    waiters.get(runKey)?.(hit);
  });
  let streamError = null;
  let streamClosing = false;
  sse.done.then(
    () => {
      if (streamClosing) return;
      streamError = new Error("the server ended the SSE stream");
      for (const resolve of waiters.values()) resolve({ type: "stream_ended", at: performance.now() });
    },
    (err) => {
      streamError = err;
      for (const resolve of waiters.values()) resolve({ type: "stream_error", at: performance.now() });
    },
  );
  await sse.ready;

  const wakeOnce = async (i) => {
    const started = performance.now();
    const { body, ms: ackMs } = await client.call("POST", `/v1/agents/${agent.id}/messages`, { text: `bench wake ${i}` }, { expect: [202] });
    const runKey = body.runKey;
    const hit =
      terminals.get(runKey) ??
      (streamError ? { type: "stream_gone", at: performance.now() } : null) ??
      (await new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ type: "timeout", at: performance.now() }), wakeTimeoutMs);
        waiters.set(runKey, (h) => {
          clearTimeout(timer);
          resolve(h);
        });
      }));
    waiters.delete(runKey);
    terminals.delete(runKey);
    return { runKey, ackMs, totalMs: hit.at - started, outcome: hit.type, terminalBeforeAck: hit.at <= started + ackMs };
  };

  const sqliteRound = async () => {
    const before = await client.benchOp(sqliteAgent.id, { op: "sqliteWrite", iterations: 1 });
    const big = await client.benchOp(sqliteAgent.id, { op: "sqliteWrite", iterations: N });
    const after = await client.benchOp(sqliteAgent.id, { op: "sqliteWrite", iterations: 1 });
    return ((big - Math.min(before, after)) / (N - 1)) * 1000; // µs
  };

  const emptyRequest = async () => (await client.call("GET", "/healthz", undefined, { expect: [200] })).ms;

  log(`  warm-up: ${warmupWakes} wakes, 20 empty requests, 1 SQLite round`);
  for (let i = 0; i < warmupWakes; i++) await wakeOnce(`warmup-${i}`);
  for (let i = 0; i < 20; i++) await emptyRequest();
  await sqliteRound();

  const wakeSamples = [];
  const ackSamples = [];
  const emptySamples = [];
  const sqliteSamples = [];
  const failures = [];
  let terminalBeforeAck = 0;
  let consecutiveFailures = 0;
  let abandoned = null;
  for (let i = 0; i < wakes; i++) {
    emptySamples.push(await emptyRequest());
    const w = await wakeOnce(i);
    if (w.outcome === "run.completed") {
      wakeSamples.push(w.totalMs);
      ackSamples.push(w.ackMs);
      if (w.terminalBeforeAck) terminalBeforeAck += 1;
      consecutiveFailures = 0;
    } else {
      failures.push({ i, runKey: w.runKey, outcome: w.outcome });
      log(`  wake ${i}: ${w.outcome} (runKey ${w.runKey})`);
      if (++consecutiveFailures >= maxConsecutiveFailures) {
        abandoned = `stopped after ${consecutiveFailures} consecutive wakes without a run terminal frame (last: ${w.outcome})`;
        log(`  ${abandoned}`);
        break;
      }
    }
    if ((i + 1) % sqliteEvery === 0) sqliteSamples.push(await sqliteRound());
    if ((i + 1) % 50 === 0 || i === wakes - 1) log(`  wakes ${i + 1}/${wakes}: p50 so far ${fmt(percentile(wakeSamples, 50), 2)} ms, failures ${failures.length}`);
  }
  streamClosing = true;
  sse.close();

  const wake = summarize(wakeSamples);
  const ack = summarize(ackSamples);
  const empty = summarize(emptySamples);
  const sqlite = summarize(sqliteSamples);
  const ratios = {
    wakeP50VsEmptyRequestP50: wake.p50 / empty.p50,
    wakeP99VsEmptyRequestP99: wake.p99 / empty.p99,
    wakeP50VsSqliteWrite: (wake.p50 * 1000) / sqlite.p50,
    wakeP99VsSqliteWrite: (wake.p99 * 1000) / sqlite.p50,
  };

  const ms = (v) => fmt(v, 2);
  const us = (v) => fmt(v, 1);
  const rows = [
    [`wake: POST → run.completed on SSE`, wake.n, "ms", ms(wake.p50), ms(wake.p99), ms(wake.mean), ms(wake.min), ms(wake.max)],
    [`  POST → 202 response (see note)`, ack.n, "ms", ms(ack.p50), ms(ack.p99), ms(ack.mean), ms(ack.min), ms(ack.max)],
    [`empty Worker request (GET /healthz)`, empty.n, "ms", ms(empty.p50), ms(empty.p99), ms(empty.mean), ms(empty.min), ms(empty.max)],
    [`one DO SQLite write (rounds of ${N})`, sqlite.n, "µs", us(sqlite.p50), us(sqlite.p99), us(sqlite.mean), us(sqlite.min), us(sqlite.max)],
  ];
  const text = [
    `Wake overhead, builtin model (${wakes} sequential wakes on one agent, one SSE stream held open)`,
    table(["measure", "n", "unit", "p50", "p99", "mean", "min", "max"], rows),
    "",
    table(
      ["ratio", "value"],
      [
        ["wake p50 / empty request p50", `${fmt(ratios.wakeP50VsEmptyRequestP50, 1)}×`],
        ["wake p99 / empty request p99", `${fmt(ratios.wakeP99VsEmptyRequestP99, 1)}×`],
        ["wake p50 / one SQLite write (p50)", `${fmt(ratios.wakeP50VsSqliteWrite, 0)}×`],
        ["wake p99 / one SQLite write (p50)", `${fmt(ratios.wakeP99VsSqliteWrite, 0)}×`],
      ],
    ),
    "",
    `note: in ${terminalBeforeAck} of ${wake.n} wakes the run.completed frame reached the client before the POST's 202 response`,
    failures.length ? `\n${failures.length} wake(s) did not complete: ${JSON.stringify(failures.slice(0, 5))}` : "",
    streamError ? `\nSSE stream error: ${streamError.message}` : "",
    abandoned ? `\nINCOMPLETE: ${abandoned}` : "",
  ].join("\n").trimEnd();

  return {
    name: "wake",
    incomplete: Boolean(abandoned),
    parameters: params,
    method:
      "wake = client time from sending POST /v1/agents/:id/messages to receiving the run.completed frame with that runKey on an already-open GET /v1/agents/:id/events SSE stream; empty request = GET /healthz round trip (one before each wake); SQLite write per-op = (T(N) − min(T(1) before, T(1) after)) / (N − 1) of {op:'sqliteWrite'} on its own agent, one round every sqliteEvery wakes",
    results: { wakeMs: wake, ackMs: ack, emptyRequestMs: empty, sqliteWriteMicros: sqlite, ratios, terminalBeforeAck, failures, abandoned, streamError: streamError?.message ?? null, sseFrameCounts: frameCounts, agentId: agent.id },
    samples: { wakeMs: wakeSamples, ackMs: ackSamples, emptyRequestMs: emptySamples, sqliteWriteMicros: sqliteSamples },
    text,
  };
}
