// (c) Alertness: one change matched against 10 000 subscriptions; webhook ingest
// with dedupe; 1 000 duplicated deliveries of one trigger webhook → exactly one run.
//
// Matching. Two fresh tenants hold 10 000 active subscriptions each: in A, 1 000 agents subscribe
// with `TASK` + {eq:["task.categoryId", gym]} and 9 000 more subscriptions (spread over the same
// agents, ≤ 100 per agent) name tokens a task write in gym never carries (other entity ids,
// CHECKLIST / RATING, task.status=done); in B, 100 agents match and 9 900 do not. workerd's clock
// stands still during synchronous work, so the dispatcher cannot time itself: the seam
// `POST /__bench/tenant/alertness {op:"match", entityId, iterations}` re-runs the dispatcher's own
// matching (index prefilter → entity fetch → evaluate, optionally + wake-job construction) for the
// stored journal batch of one task, without sending anything, and is timed from outside as
//   per-op = (T(N) − min(T(1) before, T(1) after)) / (N − 1)
// (bench/history.mjs's method). A third tenant C holds only A's kind of matching subscriptions
// (1 000 of 1 000, over a few agents), so "same matches, 10× the index" is measured too; rounds
// interleave all scenarios. Then a real journal write in A wakes 1 000 agents through the queue and
// the bench counts their run.completed frames on one tenant event stream until all are terminal (times
// from each run's endedAt, server clock, same machine); B's 100 wakes likewise.
//
// Webhooks. N signed deliveries (Vigil-Signature over "<t>.<rawBody>") to one webhook source, a
// fraction of them repeating an earlier X-Vigil-Delivery, at fixed concurrency; the tenant's stored
// batches and deliveries for the source must equal the unique deliveries. Then 1 000 POSTs of one
// trigger delivery (same X-Vigil-Delivery) to an agent's external trigger URL → exactly one run.
import { createHmac } from "node:crypto";
import os from "node:os";
import { openSse } from "./lib/client.mjs";
import { pool } from "./lib/pool.mjs";
import { fmt, median, percentile, summarize, table } from "./lib/stats.mjs";

export const defaults = {
  subscriptions: 10_000,
  matchingA: 1_000,
  matchingB: 100,
  maxSubscriptionsPerAgent: 100,
  agentConcurrency: 8,
  subscribeChunk: 1_000,
  /** Timed match rounds per scenario (interleaved), after warm-up rounds. */
  matchRounds: 10,
  warmupRounds: 2,
  /** N per scenario is chosen so that T(N) takes about this long. */
  matchTargetMs: 250,
  maxIterations: 2_000,
  /**
   * Per wave. Locally the run reports (and so the stream's frames) queue behind the wave's agent activations on the
   * one workerd thread and arrive in a burst near its end; the runs' own endedAt give wakes/s whatever the lag.
   */
  wakeTimeoutMs: 600_000,
  /** After the last agent's run ended: how long a late second run of any agent would still be caught. */
  lateRunWindowMs: 2_000,
  deliveries: 2_000,
  duplicateFraction: 0.1,
  concurrency: 16,
  triggerDeliveries: 1_000,
  /**
   * PASS bounds. cost(1 000 matches) / cost(100 matches), both among 10 000 subscriptions, at least
   * this: ≈ 1× if matching touched every subscription, ≤ 10× when only per-match work grows (the
   * per-change part — one index probe per batch token, the entity fetch — is the same in both) …
   */
  minMatchRatio: 3,
  /** … and cost(1 000 of 10 000) / cost(1 000 of 1 000) at most this (≈ 10× if it scanned them all). */
  maxTotalRatio: 1.5,
};

const TERMINAL = new Set(["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const n = (v) => v.toLocaleString("en-US");

const semanticKey = (value) => ({ tokenClass: "semanticKey", tokenValue: value });
const entityId = (value) => ({ tokenClass: "entityId", tokenValue: value });
const subtype = (namespace, value) => ({ tokenClass: "subtypeToken", tokenNamespace: namespace, tokenValue: value });

/** Subscriptions a task created in `gym` (status open) never reaches through the index. */
function nonMatchingSpec(i, label) {
  switch (i % 4) {
    case 0:
      return { tokens: [entityId(`bench_${label}_other_${i}`)] };
    case 1:
      return { tokens: [semanticKey("CHECKLIST")], predicate: { exists: "checklist.taskId" } };
    case 2:
      return { tokens: [semanticKey("RATING"), entityId(`bench_${label}_rated_${i}`)] };
    default:
      return { tokens: [subtype("task.status", "done")] };
  }
}

export async function runAlertnessBench({ client, operator, log, params: overrides = {} }) {
  const params = { ...defaults, ...overrides };
  if (!operator) throw new Error("the alertness bench needs the operator client (it creates its own tenants)");
  const stamp = Date.now().toString(36);
  const problems = [];
  const loadAtStart = os.loadavg();

  // ---------------------------------------------------------------------------------- setup
  const bench = (c, op) => c.call("POST", "/__bench/tenant/alertness", op, { expect: [200] });

  async function makeTenant(label, agentCount, matching) {
    const { body } = await operator.call("POST", "/v1/tenants", { name: `bench alertness ${label} ${stamp}` });
    const c = client.withToken(body.apiKey);
    const category = async (name) => (await c.call("POST", "/v1/journal/categories", { name })).body.id;
    const t = { label, client: c, tenantId: body.tenant.id, matching, gym: await category("gym"), quiet: await category("quiet"), agents: [], timings: {} };
    const started = performance.now();
    const indices = Array.from({ length: agentCount }, (_, i) => i);
    let made = 0;
    t.agents = await pool(indices, params.agentConcurrency, async (i) => {
      const { body: agent } = await c.call("POST", "/v1/agents", { kind: "bench-coach", displayName: `coach ${label} ${i}` });
      made += 1;
      if (made % 250 === 0 || made === agentCount) log(`  tenant ${label}: ${n(made)}/${n(agentCount)} agents created (${fmt((performance.now() - started) / 1000, 1)} s)`);
      return agent.id;
    });
    t.timings.createAgentsMs = performance.now() - started;
    return t;
  }

  async function subscribe(t, items) {
    const started = performance.now();
    for (let i = 0; i < items.length; i += params.subscribeChunk) {
      await bench(t.client, { op: "subscribe", items: items.slice(i, i + params.subscribeChunk) });
    }
    return performance.now() - started;
  }

  const matchingItems = (t) => Array.from({ length: t.matching }, (_, i) => ({ agentId: t.agents[i % t.agents.length], spec: { tokens: [semanticKey("TASK")], predicate: { eq: ["task.categoryId", t.gym] } } }));
  const nonMatchingItems = (t) => {
    const count = params.subscriptions - t.matching;
    const perAgent = Math.ceil(count / t.agents.length);
    if (perAgent + 1 > params.maxSubscriptionsPerAgent) throw new Error(`tenant ${t.label}: ${count} subscriptions over ${t.agents.length} agents exceeds ${params.maxSubscriptionsPerAgent} per agent`);
    return Array.from({ length: count }, (_, i) => ({ agentId: t.agents[i % t.agents.length], spec: nonMatchingSpec(i, t.label) }));
  };
  const writeTask = async (t, categoryId, title) => {
    const { body, ms } = await t.client.call("POST", "/v1/journal/tasks", { title, categoryId });
    return { taskId: body.id, ms };
  };

  log(`  tenant A: ${n(params.matchingA)} matching agents; tenant B: ${n(params.matchingB)}; ${n(params.subscriptions)} subscriptions each`);
  // The batches the dry-run matching replays are written before any subscription exists (no wakes).
  const A = await makeTenant("A", params.matchingA, params.matchingA);
  A.probeTask = await writeTask(A, A.gym, "probe: leg day");
  A.quietTask = await writeTask(A, A.quiet, "probe: quiet");
  A.timings.subscribeMatchingMs = await subscribe(A, matchingItems(A));
  A.timings.subscribeNonMatchingMs = await subscribe(A, nonMatchingItems(A));
  log(`  tenant A: ${n(params.subscriptions)} subscriptions in ${fmt(A.timings.subscribeMatchingMs + A.timings.subscribeNonMatchingMs, 0)} ms`);

  const B = await makeTenant("B", params.matchingB, params.matchingB);
  B.probeTask = await writeTask(B, B.gym, "probe: leg day");
  B.timings.subscribeMatchingMs = await subscribe(B, matchingItems(B));
  B.timings.subscribeNonMatchingMs = await subscribe(B, nonMatchingItems(B));
  log(`  tenant B: ${n(params.subscriptions)} subscriptions in ${fmt(B.timings.subscribeMatchingMs + B.timings.subscribeNonMatchingMs, 0)} ms`);

  // C: A's matching subscriptions and nothing else (dry-run matching only, so few agents suffice).
  const C = await makeTenant("C", Math.ceil(params.matchingA / (params.maxSubscriptionsPerAgent - 1)), params.matchingA);
  C.probeTask = await writeTask(C, C.gym, "probe: leg day");
  C.timings.subscribeMatchingMs = await subscribe(C, matchingItems(C));
  log(`  tenant C: ${n(params.matchingA)} subscriptions (all matching) over ${n(C.agents.length)} agents in ${fmt(C.timings.subscribeMatchingMs, 0)} ms`);

  for (const [t, expected] of [[A, params.subscriptions], [B, params.subscriptions], [C, params.matchingA]]) {
    t.counts = (await bench(t.client, { op: "counts" })).body;
    if (t.counts.subscriptions !== expected) problems.push(`tenant ${t.label} holds ${t.counts.subscriptions} subscriptions, expected ${expected}`);
  }

  // ------------------------------------------------------------------ dry-run matching timing
  const series = new Map();
  const scenario = (key, t, taskId, jobs, label) => {
    const s = { key, tenant: t, taskId, jobs, label, N: 0, samples: [], t1: [], tN: [], answer: null };
    series.set(key, s);
    return s;
  };
  const timeMatch = async (s, iterations) => {
    const { body, ms } = await bench(s.tenant.client, { op: "match", entityId: s.taskId, iterations, jobs: s.jobs });
    if (body.done !== iterations) throw new Error(`match answered ${JSON.stringify(body)}`);
    s.answer = body;
    return ms;
  };
  const calibrate = async (s) => {
    await timeMatch(s, 1);
    const t1 = Math.min(await timeMatch(s, 1), await timeMatch(s, 1));
    const t10 = await timeMatch(s, 11);
    const perOp = Math.max((t10 - t1) / 10, 0.01);
    s.N = Math.max(5, Math.min(params.maxIterations, Math.round(params.matchTargetMs / perOp)));
  };
  const rounds = async (list, count, warm) => {
    for (let r = 0; r < warm + count; r++) {
      const order = list.map((_, i) => list[(i + r) % list.length]);
      for (const s of order) {
        const before = await timeMatch(s, 1);
        const big = await timeMatch(s, s.N);
        const after = await timeMatch(s, 1);
        if (r < warm) continue;
        s.t1.push(before, after);
        s.tN.push(big);
        s.samples.push(((big - Math.min(before, after)) / (s.N - 1)) * 1000); // µs
      }
      if (r >= warm && ((r - warm + 1) % 5 === 0 || r === warm + count - 1)) {
        log(`  match round ${r - warm + 1}/${count}: ` + list.map((s) => `${s.key} ${fmt(median(s.samples), 0)} µs`).join(", "));
      }
    }
  };

  const all = [
    scenario("C", C, C.probeTask.taskId, false, `C: ${n(params.matchingA)} of ${n(params.matchingA)} match`),
    scenario("A", A, A.probeTask.taskId, false, `A: ${n(params.matchingA)} of ${n(params.subscriptions)} match`),
    scenario("B", B, B.probeTask.taskId, false, `B: ${n(params.matchingB)} of ${n(params.subscriptions)} match`),
    scenario("A-none", A, A.quietTask.taskId, false, `A: task in another category (0 match)`),
    scenario("C+jobs", C, C.probeTask.taskId, true, `C: ${n(params.matchingA)} of ${n(params.matchingA)} match, + wake jobs`),
    scenario("A+jobs", A, A.probeTask.taskId, true, `A: ${n(params.matchingA)} of ${n(params.subscriptions)} match, + wake jobs`),
    scenario("B+jobs", B, B.probeTask.taskId, true, `B: ${n(params.matchingB)} of ${n(params.subscriptions)} match, + wake jobs`),
  ];
  for (const s of all) await calibrate(s);
  log(`  timing matching (${all.length} series, rounds interleaved)`);
  await rounds(all, params.matchRounds, params.warmupRounds);

  for (const s of series.values()) {
    const expected = s.key === "A-none" ? 0 : s.tenant.matching;
    if (s.answer.matches !== expected) problems.push(`${s.key}: ${s.answer.matches} matches, expected ${expected}`);
  }

  // ------------------------------------------------------------------ real dispatch → wakes
  // Baseline: journal writes whose batch matches nothing (same tenant, same index).
  const quietPosts = [];
  for (let i = 0; i < 5; i++) quietPosts.push((await writeTask(A, A.quiet, `quiet ${i}`)).ms);

  // Completion is counted on ONE tenant-level subscription, not by polling 1 000 agents (polling every agent's runs
  // competed for the 2 cores the runs need, and confirmed 22 of 1 000 in 180 s): the tenant event stream
  // (GET /v1/events/stream) carries every run's run.completed / run.failed frame, forwarded by the agent's one run
  // report. Each frame names its agent and runKey and holds the run (enqueuedAt, endedAt: server clock, same machine).
  async function wakeWave(t) {
    const expected = new Set(t.agents);
    /** agentId → the terminal frames seen for it (exactly-once: one each). */
    const terminal = new Map();
    let strays = 0;
    let frames = 0;
    let startedWall = 0;
    let started = 0;
    let allSeen = null;
    let resolveAll;
    const allDone = new Promise((resolve) => (resolveAll = resolve));
    // From the log's head: a replay from 0 would hydrate the agents' creation events, activating all 1 000 agents.
    const { eventsHead } = (await bench(t.client, { op: "counts" })).body;
    const sse = openSse(`${t.client.baseUrl}/v1/events/stream?after=${eventsHead}`, t.client.token, (frame) => {
      frames += 1;
      if (frame.event !== "run.completed" && frame.event !== "run.failed") return;
      const event = frame.data;
      const run = event?.data?.run ?? {};
      if (!expected.has(event?.agentId) || (run.reason && run.reason !== "subscription")) {
        strays += 1;
        return;
      }
      const seen = terminal.get(event.agentId) ?? [];
      seen.push({ runKey: event.runKey, status: event.data.status, endedAt: run.endedAt, enqueuedAt: run.enqueuedAt, seenMs: frame.at - started });
      terminal.set(event.agentId, seen);
      if (terminal.size === expected.size && allSeen === null) {
        allSeen = frame.at - started;
        resolveAll();
      }
    });
    await sse.ready;
    started = performance.now();
    startedWall = Date.now();
    const write = await writeTask(t, t.gym, "leg day");
    log(`  tenant ${t.label}: journal write matched → POST answered in ${fmt(write.ms, 0)} ms; counting terminal runs on the tenant event stream`);
    const progress = setInterval(() => log(`  tenant ${t.label}: ${n(terminal.size)}/${n(expected.size)} runs terminal after ${fmt((performance.now() - started) / 1000, 1)} s`), 5_000);
    const timedOut = await Promise.race([allDone.then(() => false), sleep(params.wakeTimeoutMs).then(() => true), sse.done.then(() => true)]);
    clearInterval(progress);
    // A second run of an agent (a redelivered wake that slipped past the runKey dedupe) would arrive after its first.
    await sleep(params.lateRunWindowMs);
    sse.close();
    log(`  tenant ${t.label}: ${n(terminal.size)}/${n(expected.size)} runs terminal${allSeen === null ? "" : ` after ${fmt(allSeen / 1000, 1)} s`} (${n(frames)} frames on the stream)`);
    const first = [...terminal.values()].map((seen) => seen[0]);
    const ended = first.filter((r) => r.endedAt).map((r) => Date.parse(r.endedAt) - startedWall);
    const enqueued = first.filter((r) => r.enqueuedAt).map((r) => Date.parse(r.enqueuedAt) - startedWall);
    const statuses = {};
    for (const r of first) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const extraRuns = [...terminal.values()].filter((seen) => new Set(seen.map((r) => r.runKey)).size !== 1).length;
    // The real dispatch's own count of queued wakes, stored with its batch.
    const queued = (await bench(t.client, { op: "match", entityId: write.taskId, iterations: 1 })).body.matchedCount;
    const lastEnded = ended.length ? Math.max(...ended) : null;
    return {
      agents: expected.size,
      terminal: terminal.size,
      completed: statuses.completed ?? 0,
      statuses,
      agentsWithOtherThanOneRun: extraRuns,
      postMs: write.ms,
      endedMs: ended.length ? summarize(ended) : null,
      enqueuedMs: enqueued.length ? summarize(enqueued) : null,
      allTerminalSeenMs: allSeen,
      wakesPerSecond: lastEnded ? (statuses.completed ?? 0) / (lastEnded / 1000) : null,
      streamFrames: frames,
      strayTerminalFrames: strays,
      timedOut: timedOut && terminal.size < expected.size,
      queuedByDispatch: queued,
    };
  }
  const waveA = await wakeWave(A);
  const waveB = await wakeWave(B);
  for (const [t, w] of [[A, waveA], [B, waveB]]) {
    if (w.timedOut) problems.push(`tenant ${t.label}: ${w.agents - w.terminal} wakes not terminal after ${params.wakeTimeoutMs} ms`);
    if (w.completed !== w.agents) problems.push(`tenant ${t.label}: ${w.completed}/${w.agents} wakes completed (${JSON.stringify(w.statuses)})`);
    if (w.queuedByDispatch !== w.agents) problems.push(`tenant ${t.label}: the dispatch queued ${w.queuedByDispatch} wakes for ${w.agents} matching agents`);
    if (w.agentsWithOtherThanOneRun) problems.push(`tenant ${t.label}: ${w.agentsWithOtherThanOneRun} agents with more than one run`);
  }

  // ------------------------------------------------------------------ webhook ingest + dedupe
  const { body: source } = await client.call("POST", "/v1/webhook-sources", { name: `bench ${stamp}`, scheme: "vigil", tokenMapping: { semanticKey: "BENCH_PING", entityIdFrom: "body:order" } });
  const unique = Math.round(params.deliveries * (1 - params.duplicateFraction));
  const deliveries = Array.from({ length: unique }, (_, i) => ({ id: `dlv-${stamp}-${i}`, body: JSON.stringify({ order: `ord_${i}`, n: i, note: "bench delivery" }) }));
  // Each duplicate repeats a random earlier delivery at a random later position (a sender's retry).
  for (let d = 0; d < params.deliveries - unique; d++) {
    const original = Math.floor(Math.random() * unique);
    const at = original + 1 + Math.floor(Math.random() * (deliveries.length - original));
    deliveries.splice(at, 0, { ...deliveries[original] });
  }
  const sign = (body) => {
    const t = Math.floor(Date.now() / 1000);
    return `t=${t},v1=${createHmac("sha256", source.secret).update(`${t}.${body}`).digest("hex")}`;
  };
  const post = async (url, body, headers) => {
    const started = performance.now();
    let res;
    let text;
    try {
      res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      text = await res.text();
    } catch (error) {
      // Counted as a non-202 answer (and so a FAIL), not a crash of the whole bench.
      return { status: 0, body: null, text: `fetch failed: ${error.cause?.code ?? error.message}`, ms: performance.now() - started };
    }
    const ms = performance.now() - started;
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep null
    }
    return { status: res.status, body: parsed, text, ms };
  };
  log(`  webhook source: ${n(params.deliveries)} signed deliveries (${n(unique)} unique), concurrency ${params.concurrency}`);
  let sent = 0;
  const hookStarted = performance.now();
  const hookResults = await pool(deliveries, params.concurrency, async (d) => {
    const r = await post(source.url, d.body, { "vigil-signature": sign(d.body), "x-vigil-delivery": d.id });
    if (++sent % 500 === 0) log(`  webhook source: ${n(sent)}/${n(params.deliveries)} (${fmt(sent / ((performance.now() - hookStarted) / 1000), 0)}/s)`);
    return r;
  });
  const hookWallMs = performance.now() - hookStarted;
  const hookBad = hookResults.filter((r) => r.status !== 202);
  const hookDuplicates = hookResults.filter((r) => r.body?.duplicate === true).length;
  const hookCounts = (await bench(client, { op: "counts", source: `webhook:${source.id}` })).body;
  const hookLatency = summarize(hookResults.map((r) => r.ms));
  const forged = await post(source.url, deliveries[0].body, { "vigil-signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}`, "x-vigil-delivery": "forged-1" });
  const hookPass = hookBad.length === 0 && hookCounts.batches === unique && hookCounts.deliveries === unique && hookDuplicates === params.deliveries - unique && forged.status === 401;
  if (!hookPass) problems.push(`webhook: ${hookBad.length} non-202 (${hookBad[0]?.status} ${hookBad[0]?.text?.slice(0, 200) ?? ""}), batches ${hookCounts.batches}, deliveries ${hookCounts.deliveries}, duplicate answers ${hookDuplicates}, forged → ${forged.status}`);

  // ------------------------------------------------------------------ trigger: 1 000 duplicates → 1 run
  const { body: triggerAgent } = await client.call("POST", "/v1/agents", { kind: "bench-trigger", displayName: "bench trigger" });
  const { body: trigger } = await client.call("POST", `/v1/agents/${triggerAgent.id}/trigger`, {});
  const triggerBody = JSON.stringify({ event: "deploy", sha: "abc123" });
  log(`  external trigger: ${n(params.triggerDeliveries)} POSTs of one delivery id, concurrency ${params.concurrency}`);
  const trigStarted = performance.now();
  let trigSent = 0;
  const trigResults = await pool(Array.from({ length: params.triggerDeliveries }), params.concurrency, async () => {
    const r = await post(trigger.url, triggerBody, { "x-vigil-delivery": `deploy-${stamp}` });
    if (++trigSent % 250 === 0) log(`  external trigger: ${n(trigSent)}/${n(params.triggerDeliveries)}`);
    return r;
  });
  const trigWallMs = performance.now() - trigStarted;
  const trigBad = trigResults.filter((r) => r.status !== 202);
  const runKeys = new Set(trigResults.map((r) => r.body?.runKey).filter(Boolean));
  const firstAnswers = trigResults.filter((r) => r.body?.duplicate === false).length;
  let trigRun = null;
  const waitStarted = performance.now();
  while (performance.now() - waitStarted < 30_000) {
    const { body } = await client.call("GET", `/v1/agents/${triggerAgent.id}/runs?limit=100`);
    if (body.data.length > 0 && body.data.every((r) => TERMINAL.has(r.status))) {
      trigRun = body.data;
      break;
    }
    await sleep(100);
  }
  await sleep(1_000); // a late second run would show up here
  const trigRuns = (await client.call("GET", `/v1/agents/${triggerAgent.id}/runs?limit=100`)).body.data;
  const trigSettledMs = trigRun ? performance.now() - trigStarted : null;
  const trigPass = trigBad.length === 0 && trigRuns.length === 1 && runKeys.size === 1 && firstAnswers === 1 && trigRuns[0]?.status === "completed";
  if (!trigPass) problems.push(`trigger: ${trigBad.length} non-202 (${trigBad[0]?.status} ${trigBad[0]?.text?.slice(0, 200) ?? ""}), runs ${trigRuns.length}, runKeys ${runKeys.size}, first answers ${firstAnswers}, status ${trigRuns[0]?.status}`);
  const trigLatency = summarize(trigResults.map((r) => r.ms));

  // ------------------------------------------------------------------ report
  const stats = {};
  for (const s of series.values()) {
    stats[s.key] = {
      label: s.label,
      iterations: s.N,
      candidates: s.answer.candidates,
      matches: s.answer.matches,
      jobs: s.answer.jobs,
      perOpMicros: { median: median(s.samples), p25: percentile(s.samples, 25), p75: percentile(s.samples, 75), min: Math.min(...s.samples), max: Math.max(...s.samples) },
      requestMs: { iterations1Median: median(s.t1), iterationsNMedian: median(s.tN) },
      samplesMicros: s.samples,
    };
  }
  const med = (key) => stats[key].perOpMicros.median;
  // Linear model through A and B (same index, same batch shape): cost = perChange + perMatch × matches.
  const fit = (a, b) => {
    const perMatch = (med(a) - med(b)) / (params.matchingA - params.matchingB);
    return { perMatchMicros: perMatch, perChangeMicros: med(b) - params.matchingB * perMatch };
  };
  const paired = (a, b) => median(series.get(a).samples.map((v, i) => v / series.get(b).samples[i]));
  const ratios = {
    match1000vs100: med("A") / med("B"),
    match1000vs100Paired: paired("A", "B"),
    withJobs1000vs100: med("A+jobs") / med("B+jobs"),
    withJobs1000vs100Paired: paired("A+jobs", "B+jobs"),
    total10kVs1k: med("A") / med("C"),
    total10kVs1kPaired: paired("A", "C"),
    total10kVs1kWithJobs: med("A+jobs") / med("C+jobs"),
    fit: fit("A", "B"),
    fitWithJobs: fit("A+jobs", "B+jobs"),
    candidatesNotMatchingVsMatching: med("A-none") / med("A"),
  };
  const matchPass = ratios.match1000vs100 >= params.minMatchRatio && ratios.total10kVs1k <= params.maxTotalRatio;
  const wakePass = !waveA.timedOut && waveA.completed === waveA.agents && !waveB.timedOut && waveB.completed === waveB.agents;

  const us = (v) => fmt(v, 0);
  const ms = (v) => fmt(v, 1);
  const matchRows = [...series.values()].map((s) => {
    const st = stats[s.key];
    return [st.label, n(s.tenant.counts.subscriptions), n(st.candidates), n(st.matches), s.N, us(st.perOpMicros.median), us(st.perOpMicros.p25), us(st.perOpMicros.p75)];
  });
  const waveRow = (label, w) => [label, n(w.agents), n(w.queuedByDispatch ?? 0), n(w.completed), ms(w.postMs), w.endedMs ? ms(w.endedMs.min) : "n/a", w.endedMs ? ms(w.endedMs.p50) : "n/a", w.endedMs ? ms(w.endedMs.p90) : "n/a", w.endedMs ? ms(w.endedMs.max) : "n/a", w.allTerminalSeenMs ? ms(w.allTerminalSeenMs) : "n/a", w.wakesPerSecond ? fmt(w.wakesPerSecond, 0) : "n/a"];
  const text = [
    `One change vs ${n(params.subscriptions)} subscriptions — dispatcher matching per change, dry run inside the TenantDO (per-op = (T(N) − T(1)) / (N − 1); ${params.matchRounds} interleaved rounds)`,
    table(["scenario", "subs", "candidates", "matches", "N", "median µs", "p25 µs", "p75 µs"], matchRows),
    "",
    table(
      ["ratio", "value"],
      [
        [`${n(params.matchingA)} vs ${n(params.matchingB)} matches (both of ${n(params.subscriptions)})`, `${fmt(ratios.match1000vs100, 2)}× (paired ${fmt(ratios.match1000vs100Paired, 2)}×)`],
        ["  same, + wake-job construction", `${fmt(ratios.withJobs1000vs100, 2)}× (paired ${fmt(ratios.withJobs1000vs100Paired, 2)}×)`],
        [`${n(params.matchingA)} matches: ${n(params.subscriptions)} vs ${n(params.matchingA)} subscriptions (A vs C)`, `${fmt(ratios.total10kVs1k, 2)}× (paired ${fmt(ratios.total10kVs1kPaired, 2)}×)`],
        ["  same, + wake-job construction", `${fmt(ratios.total10kVs1kWithJobs, 2)}×`],
        ["fit through A and B: µs per change + µs per match", `${fmt(ratios.fit.perChangeMicros, 0)} + ${fmt(ratios.fit.perMatchMicros, 2)}`],
        ["  same, + wake-job construction", `${fmt(ratios.fitWithJobs.perChangeMicros, 0)} + ${fmt(ratios.fitWithJobs.perMatchMicros, 2)}`],
        [`task in another category (${n(params.matchingA)} candidates fail the predicate) vs A`, `${fmt(ratios.candidatesNotMatchingVsMatching, 2)}×`],
      ],
    ),
    `matching ∝ matches: ${n(params.matchingA)}/${n(params.matchingB)} ratio ≥ ${params.minMatchRatio}× and ${n(params.subscriptions)}/${n(params.matchingA)}-subscription ratio ≤ ${params.maxTotalRatio}× → ${matchPass ? "PASS" : "FAIL"}`,
    "",
    `Real dispatch: POST /v1/journal/tasks in gym → wakes through the queue → runs terminal (ms after the POST was sent, from each run's endedAt; "all seen" = the last run.completed frame reached the tenant event stream)`,
    table(["wave", "agents", "queued", "completed", "POST ms", "first ms", "p50 ms", "p90 ms", "last ms", "all seen ms", "wakes/s"], [waveRow(`A: ${n(params.matchingA)} of ${n(params.subscriptions)}`, waveA), waveRow(`B: ${n(params.matchingB)} of ${n(params.subscriptions)}`, waveB)]),
    `journal POST in another category (same tenant: ${n(params.matchingA)} candidates, 0 matches, 5×): median ${ms(median(quietPosts))} ms`,
    `every woken agent has exactly one run; all ${n(waveA.agents)} + ${n(waveB.agents)} wakes completed → ${wakePass ? "PASS" : "FAIL"}`,
    "",
    `Webhook ingest (vigil signature, ${n(params.deliveries)} deliveries, ${n(params.deliveries - unique)} duplicates, concurrency ${params.concurrency})`,
    table(
      ["measure", "value"],
      [
        ["deliveries/s", fmt(params.deliveries / (hookWallMs / 1000), 0)],
        ["latency p50 / p99 / max ms", `${ms(hookLatency.p50)} / ${ms(hookLatency.p99)} / ${ms(hookLatency.max)}`],
        ["answered 202 / duplicate:true", `${n(hookResults.length - hookBad.length)} / ${n(hookDuplicates)}`],
        ["batches / deliveries stored (unique sent)", `${n(hookCounts.batches)} / ${n(hookCounts.deliveries)} (${n(unique)})`],
        ["forged signature", `HTTP ${forged.status}`],
      ],
    ),
    `batches == deliveries == unique, forged → 401 → ${hookPass ? "PASS" : "FAIL"}`,
    "",
    `External trigger: ${n(params.triggerDeliveries)} POSTs of one delivery id (concurrency ${params.concurrency})`,
    table(
      ["measure", "value"],
      [
        ["wall time for all POSTs", `${ms(trigWallMs)} ms (${fmt(params.triggerDeliveries / (trigWallMs / 1000), 0)}/s)`],
        ["latency p50 / p99 ms", `${ms(trigLatency.p50)} / ${ms(trigLatency.p99)}`],
        ["202 answers / duplicate:false / distinct runKeys", `${n(trigResults.length - trigBad.length)} / ${firstAnswers} / ${runKeys.size}`],
        ["runs of the agent (status)", `${trigRuns.length} (${trigRuns.map((r) => r.status).join(", ")})`],
        ["first POST → run terminal seen", trigSettledMs === null ? "n/a" : `${ms(trigSettledMs)} ms`],
      ],
    ),
    `exactly one run → ${trigPass ? "PASS" : "FAIL"}`,
    "",
    `load average (1 min) at start / end: ${fmt(loadAtStart[0], 2)} / ${fmt(os.loadavg()[0], 2)} on ${os.cpus().length} CPUs — absolute times are only comparable at similar load; ratios are measured within one run`,
    problems.length ? `\nPROBLEMS:\n- ${problems.join("\n- ")}` : "",
  ].join("\n").trimEnd();

  return {
    name: "alertness",
    parameters: params,
    method:
      "matching = dry run of the dispatcher's matching (Dispatcher.candidates → fetchEntities → evaluate, '+jobs' also wakeJob) for a stored journal batch inside the TenantDO via POST /__bench/tenant/alertness {op:'match'}, timed from the client: per-op = (T(N) − min(T(1) before, T(1) after)) / (N − 1), N calibrated to ~matchTargetMs, median over interleaved rounds; wakes = POST /v1/journal/tasks, then run.completed/run.failed frames counted per agent on one GET /v1/events/stream subscription (opened before the POST) until every matching agent's run is terminal, plus a late-run window; times from run.endedAt (server clock) minus the client's wall time at the POST; webhook = signed POST /v1/hooks/s/:id at fixed concurrency, stored batches/deliveries counted in the TenantDO; trigger = POST /v1/hooks/t/:id with one X-Vigil-Delivery, runs listed afterwards",
    results: {
      pass: { matching: matchPass, wakes: wakePass, webhook: hookPass, trigger: trigPass },
      problems,
      loadAverage: { start: loadAtStart, end: os.loadavg() },
      matching: { scenarios: stats, ratios, bounds: { minMatchRatio: params.minMatchRatio, maxTotalRatio: params.maxTotalRatio } },
      setup: Object.fromEntries([A, B, C].map((t) => [t.label, { tenantId: t.tenantId, agents: t.agents.length, matching: t.matching, counts: t.counts, timings: t.timings }])),
      wakes: { A: waveA, B: waveB, quietPostMs: quietPosts },
      webhook: { sourceId: source.id, sent: params.deliveries, unique, wallMs: hookWallMs, perSecond: params.deliveries / (hookWallMs / 1000), latencyMs: hookLatency, non202: hookBad.length, duplicateAnswers: hookDuplicates, stored: hookCounts, forgedStatus: forged.status },
      trigger: { agentId: triggerAgent.id, sent: params.triggerDeliveries, wallMs: trigWallMs, latencyMs: trigLatency, non202: trigBad.length, firstAnswers, distinctRunKeys: runKeys.size, runs: trigRuns.map((r) => ({ runKey: r.runKey, status: r.status, reason: r.reason })), settledMs: trigSettledMs },
    },
    incomplete: waveA.timedOut || waveB.timedOut,
    text,
  };
}
