// (a) Append one message + assemble a run's context, at several history lengths, with
// compaction running: each append plans compaction and works off due jobs (summaries, summaries of
// summaries) exactly as a run's "maybe compact" does, and the context is the run's real one
// (slots + report head + cold/warm summaries + hot messages, token-bounded). A freshly seeded thread
// is compacted to steady state first (timed separately as "catch-up").
//
// The loop runs inside the AgentDO ({op:"appendAndAssemble"}), but workerd's clock does not move
// during synchronous work, so it is timed from outside: each round times one request with
// `iterations: 1` before and after a request with `iterations: N`, and
//   per-op = (T(N) − min(T(1) before, T(1) after)) / (N − 1)
// i.e. the empty-request baseline (HTTP + auth + DO RPC + one op) is subtracted; the min of the
// two keeps a one-off stall in a baseline request from producing a bogus (even negative) sample.
// Rounds are interleaved across sizes (rotating order) so machine drift hits every size alike.
import { fmt, mean, percentile, median, table } from "./lib/stats.mjs";

export const defaults = {
  sizes: [100, 10_000, 100_000],
  iterations: 50,
  /**
   * Timed rounds per size: the paired ratio is a median over rounds and settles by round 15–20, while each round
   * re-seeds the 100-message thread (it outgrows its 10 %) and costs ~6 s on a loaded 2-core machine.
   */
  rounds: 20,
  warmupRounds: 2,
  seedChunk: 20_000,
  /** A thread that grew more than this fraction past its size is replaced by a freshly seeded one. */
  maxGrowth: 0.1,
  bound: 1.5,
  /** Profile of the op's parts (append alone, compaction planning alone, assembly alone) on the smallest size. */
  breakdownRounds: 15,
};

export async function runHistoryBench({ client, log, params: overrides = {} }) {
  const params = { ...defaults, ...overrides };
  const { sizes, iterations: N, rounds, warmupRounds, seedChunk, maxGrowth, bound } = params;
  const subjects = [];
  const seedTimings = [];
  const catchUps = [];

  /** Bulk-seeded rows bypass the run loop, so compaction catches up once before anything is timed. */
  const catchUp = async (subject) => {
    let summaries = 0;
    let ms = 0;
    let memory;
    for (let idle = 0; idle < 3; ) {
      // One bounded batch per request, so no request holds the Durable Object for long. A batch that
      // hits its limit also continues in the background (as after a run): done when both are idle.
      const { body, ms: batchMs } = await client.call("POST", `/__bench/agents/${subject.agentId}/op`, { op: "compact", threadId: subject.threadId }, { expect: [200] });
      ms += batchMs;
      ({ body: memory } = await client.call("GET", `/v1/agents/${subject.agentId}/memory`, undefined, { expect: [200] }));
      idle = body.done === 0 && memory.compaction.pending + memory.compaction.running === 0 ? idle + 1 : 0;
    }
    summaries = memory.counts.summaries - (subject.summariesBefore ?? 0);
    subject.summariesBefore = memory.counts.summaries;
    catchUps.push({ size: subject.size, thread: subject.threadId, summariesCommitted: summaries, ms });
    if (subject.size >= seedChunk) log(`  compaction catch-up of the ${subject.size.toLocaleString("en-US")}-message thread: ${summaries.toLocaleString("en-US")} summaries in ${fmt(ms / 1000, 1)} s`);
  };

  const seedThread = async (subject) => {
    subject.threadCount += 1;
    subject.threadId = `bench-history-${subject.size}-${subject.threadCount}`;
    let seeded = 0;
    while (seeded < subject.size) {
      const count = Math.min(seedChunk, subject.size - seeded);
      const ms = await client.benchOp(subject.agentId, { op: "seed", threadId: subject.threadId, count });
      seedTimings.push({ size: subject.size, count, ms });
      seeded += count;
      if (subject.size >= seedChunk) log(`  seeding ${subject.size.toLocaleString("en-US")}-message thread: ${seeded.toLocaleString("en-US")} / ${subject.size.toLocaleString("en-US")} (${fmt(ms, 0)} ms for ${count.toLocaleString("en-US")})`);
    }
    subject.length = subject.size;
    await catchUp(subject);
  };

  for (const size of sizes) {
    const { body: agent } = await client.call("POST", "/v1/agents", { kind: "bench-history", displayName: `bench history ${size}` });
    const subject = { size, agentId: agent.id, threadId: null, threadCount: 0, length: 0, samples: [], t1: [], tN: [], lengthMin: Infinity, lengthMax: 0 };
    subjects.push(subject);
    await seedThread(subject);
  }
  log(`  seeded ${sizes.map((s) => s.toLocaleString("en-US")).join(" / ")} messages (one agent per size)`);

  const t = async (subject, iterations) => {
    const ms = await client.benchOp(subject.agentId, { op: "appendAndAssemble", threadId: subject.threadId, iterations });
    subject.length += iterations;
    return ms;
  };

  const totalRounds = warmupRounds + rounds;
  for (let r = 0; r < totalRounds; r++) {
    const warm = r < warmupRounds;
    const order = sizes.map((_, i) => subjects[(i + r) % subjects.length]);
    for (const subject of order) {
      if (subject.length + 2 + N > subject.size * (1 + maxGrowth) && subject.length > subject.size) await seedThread(subject);
      const startLength = subject.length;
      const before = await t(subject, 1);
      const big = await t(subject, N);
      const after = await t(subject, 1);
      if (warm) continue;
      const baseline = Math.min(before, after);
      subject.t1.push(before, after);
      subject.tN.push(big);
      subject.samples.push(((big - baseline) / (N - 1)) * 1000); // µs
      subject.lengthMin = Math.min(subject.lengthMin, startLength);
      subject.lengthMax = Math.max(subject.lengthMax, subject.length);
    }
    if (!warm && ((r - warmupRounds + 1) % 5 === 0 || r === totalRounds - 1)) {
      log(`  round ${r - warmupRounds + 1}/${rounds}: ` + subjects.map((s) => `${s.size.toLocaleString("en-US")}→${fmt(median(s.samples), 0)} µs`).join(", "));
    }
  }

  const perSize = subjects.map((s) => ({
    size: s.size,
    agentId: s.agentId,
    threadsSeeded: s.threadCount,
    historyDuringTiming: { min: s.lengthMin, max: s.lengthMax },
    perOpMicros: { median: median(s.samples), p25: percentile(s.samples, 25), p75: percentile(s.samples, 75), min: Math.min(...s.samples), max: Math.max(...s.samples), mean: mean(s.samples) },
    requestMs: { iterations1Median: median(s.t1), iterationsNMedian: median(s.tN) },
    samplesMicros: s.samples,
  }));
  const small = perSize.find((p) => p.size === Math.min(...sizes));
  const large = perSize.find((p) => p.size === Math.max(...sizes));
  const ratio = large.perOpMicros.median / small.perOpMicros.median;
  // Same-round ratios (the sizes' samples of one round are seconds apart): cancels slow drift.
  for (const p of perSize) p.pairedRatioVsSmallest = median(p.samplesMicros.map((v, i) => v / small.samplesMicros[i]));
  const pass = ratio <= bound;

  const rows = perSize.map((p) => [
    p.size.toLocaleString("en-US"),
    `${p.historyDuringTiming.min.toLocaleString("en-US")}–${p.historyDuringTiming.max.toLocaleString("en-US")}`,
    fmt(p.perOpMicros.median, 0),
    fmt(p.perOpMicros.p25, 0),
    fmt(p.perOpMicros.p75, 0),
    fmt(p.requestMs.iterations1Median, 2),
    fmt(p.requestMs.iterationsNMedian, 2),
    `${fmt(p.perOpMicros.median / small.perOpMicros.median, 2)}×`,
    `${fmt(p.pairedRatioVsSmallest, 2)}×`,
  ]);
  // Breakdown: each part timed alone the same way, on the smallest
  // size's thread; append last, since it grows the thread (and leaves its new messages uncompacted).
  const breakdown = {};
  for (const part of ["plan", "assemble", "append"]) {
    const samples = [];
    for (let r = 0; r < params.breakdownRounds; r++) {
      const op = (iterations) => client.benchOp(small.agentId, { op: "profile", part, threadId: subjects.find((x) => x.size === small.size).threadId, iterations });
      const t1a = await op(1);
      const tN = await op(N);
      const t1b = await op(1);
      samples.push(((tN - Math.min(t1a, t1b)) / (N - 1)) * 1000);
    }
    breakdown[part] = { median: median(samples), p25: percentile(samples, 25), p75: percentile(samples, 75), samples };
  }
  const summariesPerSize = sizes.map((size) => catchUps.filter((c) => c.size === size).at(-1)?.summariesCommitted ?? 0);
  const text = [
    `Append + compaction + assemble context (slots, report, ≤ 4 cold + ≤ 8 warm summaries, ≤ 40 hot msgs, ≤ 12 000 tokens), per op, ${rounds} rounds × ${N} ops, interleaved`,
    table(["history", "thread length while timed", "median µs/op", "p25 µs", "p75 µs", "T(1) ms", `T(${N}) ms`, "vs smallest", "paired ratio"], rows),
    "",
    `${large.size.toLocaleString("en-US")} vs ${small.size.toLocaleString("en-US")}: ${fmt(ratio, 2)}× (ratio of medians; bound ≤ ${bound}×) → ${pass ? "PASS" : "FAIL"}`,
    `(paired ratio = median over rounds of this size's sample / the smallest size's sample in the same round)`,
    `breakdown on the ${small.size.toLocaleString("en-US")}-message thread (each part alone, ${params.breakdownRounds} rounds × ${N}): ` +
      Object.entries(breakdown).map(([part, b]) => `${part} ${fmt(b.median, 0)} µs`).join(", ") +
      ` (sum ${fmt(Object.values(breakdown).reduce((a, b) => a + b.median, 0), 0)} µs; the op also works off due compaction jobs)`,
    `compaction catch-up after seeding (summaries committed): ${sizes.map((size, i) => `${size.toLocaleString("en-US")} → ${summariesPerSize[i].toLocaleString("en-US")}`).join(", ")}`,
  ].join("\n");

  return {
    name: "history",
    parameters: params,
    method: "per-op (append + plan compaction + work off due jobs + assemble the run context) = (T(iterations=N) − min(T(1) before, T(1) after)) / (N − 1), timed from the client; median over rounds; rounds interleaved across sizes; a thread that grew > maxGrowth past its size is replaced by a freshly seeded one, compacted to steady state before timing",
    results: { perSize, ratioLargestVsSmallest: ratio, pairedRatioLargestVsSmallest: large.pairedRatioVsSmallest, bound, pass, breakdownMicros: breakdown },
    seedTimings,
    compactionCatchUps: catchUps,
    text,
  };
}
